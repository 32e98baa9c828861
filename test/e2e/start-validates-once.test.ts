import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * An outside policy whose `check` (run by the loader's second pass, once per validation of the config) appends a
 * line to a file: the number of lines is the number of times the config was validated.
 */
const LOAD_COUNT = `
import { appendFileSync } from 'node:fs'
export default {
  name: 'load-count',
  description: 'Appends a line to a file each time the config is validated.',
  schema: { type: 'object', required: ['file'], properties: { file: { type: 'string' } }, additionalProperties: false },
  check (options) {
    appendFileSync(options.file, 'checked\\n')
    return []
  },
  create: () => () => undefined,
}
`

const config = (dir: string): string => `
plugins: [./load-count.mjs]
admin: false
server: { data_dir: ${join(dir, 'data')} }
issuer: { issuer: http://localhost:8080 }
scopes: {}
services:
  content:
    prefix: /public/v1
    envelope: plain
    routes:
      content_list:
        - load-count: { file: ${join(dir, 'checks.log')} }
    source_dir: ${repoPath('content')}
`

const linesOf = async (file: string): Promise<number> => (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '').length

/**
 * `lanegate start` used to validate the config twice in one process: once to read `server.workers` (is this a
 * cluster primary?), then again to boot. Now the config read for the first is the one booted.
 */
t.test('lanegate start validates the config once; a reload validates it once more', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-validates-once-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'load-count.mjs'), LOAD_COUNT)
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(dir))
  const checks = join(dir, 'checks.log')

  const gateway = await spawnGateway({ config: file, admin: false })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
  })
  t.equal(await linesOf(checks), 1, 'validated once by the time it listens')

  // The control: each validation does add a line (SIGHUP re-reads the unchanged file and says so).
  gateway.child.kill('SIGHUP')
  await waitFor(() => gateway.output().includes('config reload: no change'), { what: 'the reload to be logged' })
  t.equal(await linesOf(checks), 2, 'validated once more by the reload')
})
