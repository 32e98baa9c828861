import { readFileSync } from 'node:fs'
import t from 'tap'
import { withYoungGeneration, YOUNG_GENERATION_FLAG } from '../../src/runtime/young-generation.js'
import { repoPath } from '../helpers/paths.js'

t.test('a worker gets the young generation flag first, unless the operator sized the young generation', async (t) => {
  t.same(withYoungGeneration([], ''), [YOUNG_GENERATION_FLAG])
  t.same(withYoungGeneration(['--enable-source-maps'], ''), [YOUNG_GENERATION_FLAG, '--enable-source-maps'], 'the primary\'s own options stay, after it')
  t.same(withYoungGeneration(['--max-semi-space-size=4'], ''), ['--max-semi-space-size=4'], 'a maximum of theirs: ours would contradict it')
  t.same(withYoungGeneration(['--min_semi_space_size=32'], ''), ['--min_semi_space_size=32'], 'V8\'s underscore spelling')
  t.same(withYoungGeneration([], '--enable-source-maps  --max-semi-space-size=64'), [], 'sized in NODE_OPTIONS, which the worker inherits')
  t.same(withYoungGeneration(['--min-semi-space-size-extra'], ''), [YOUNG_GENERATION_FLAG, '--min-semi-space-size-extra'], 'only the option itself counts')
})

t.test('npm start and the Docker image start node with the flag (the launches of record)', async (t) => {
  const scripts = (JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  t.match(scripts.start, new RegExp(`^exec node ${YOUNG_GENERATION_FLAG} bin/lanegate\\.js start$`))
  const cmd = readFileSync(repoPath('docker/Dockerfile'), 'utf8').split('\n').find((line) => line.startsWith('CMD '))
  t.equal(cmd, `CMD ["node", "${YOUNG_GENERATION_FLAG}", "bin/lanegate.js", "start", "--config", "/app/gateway.yaml"]`)
  t.match(readFileSync(repoPath('docs/operations.md'), 'utf8'), `NODE_OPTIONS=${YOUNG_GENERATION_FLAG}`, 'the operations guide says how to pass it on a launch of one\'s own')
})
