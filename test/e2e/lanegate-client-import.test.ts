import { spawnSync } from 'node:child_process'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'

// `lanegate/client` must load none of the server's dependencies. A child process imports it through the package's
// exports map with an import guard installed (test/helpers/import-guard): any file outside dist/src/client/ —
// a package such as fastify, pg, better-sqlite3, ioredis, undici, or a server module — fails the import.

function importGuarded (specifier: string): { status: number | null, stdout: string, stderr: string } {
  const program = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m).sort()))`
  const child = spawnSync(process.execPath, ['--import', repoPath('dist/test/helpers/import-guard/register.js'), '--input-type=module', '-e', program], { cwd: repoPath(), encoding: 'utf8' })
  return { status: child.status, stdout: child.stdout, stderr: child.stderr }
}

t.test('importing lanegate/client loads no server dependency', async (t) => {
  const result = importGuarded('lanegate/client')
  t.equal(result.stderr, '')
  t.equal(result.status, 0)
  t.same(JSON.parse(result.stdout), [
    'LanegateClient', 'LanegateError', 'LanegateNetworkError', 'TokenSource', 'backoffMs', 'codeOfAnswer', 'defaultPrefixes',
    'isLanegateError', 'isLanegateErrorCode', 'lanegateErrorCodes', 'systemClock',
  ])
})

t.test('the guard does catch a server dependency (the check can fail)', async (t) => {
  const result = importGuarded('./dist/src/start/app.js')
  t.equal(result.status, 1)
  t.match(result.stderr, /import guard: .*dist\/src\/start\/app\.js imports fastify/)
})
