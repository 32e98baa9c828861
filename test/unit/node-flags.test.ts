import { readFileSync } from 'node:fs'
import t from 'tap'
import { MEMORY_REDUCER_FLAG } from '../../src/node-tuning/memory-reducer.js'
import { GATEWAY_NODE_FLAGS, withGatewayNodeFlags } from '../../src/node-tuning/node-flags.js'
import { YOUNG_GENERATION_FLAG } from '../../src/node-tuning/young-generation.js'
import { repoPath } from '../helpers/paths.js'

t.test('the gateway\'s node flags: the young generation\'s floor and no memory reducer', async (t) => {
  t.same(GATEWAY_NODE_FLAGS, ['--min-semi-space-size=8', '--no-memory-reducer'])
})

t.test('a worker gets the gateway\'s flags first, each unless the operator settled its matter', async (t) => {
  t.same(withGatewayNodeFlags([], ''), [YOUNG_GENERATION_FLAG, MEMORY_REDUCER_FLAG])
  t.same(withGatewayNodeFlags(['--enable-source-maps'], ''), [YOUNG_GENERATION_FLAG, MEMORY_REDUCER_FLAG, '--enable-source-maps'], 'the primary\'s own options stay, after them')
  t.same(withGatewayNodeFlags(['--max-semi-space-size=4'], ''), [MEMORY_REDUCER_FLAG, '--max-semi-space-size=4'], 'a maximum of theirs: our minimum would contradict it')
  t.same(withGatewayNodeFlags(['--min_semi_space_size=32'], ''), [MEMORY_REDUCER_FLAG, '--min_semi_space_size=32'], 'V8\'s underscore spelling')
  t.same(withGatewayNodeFlags([], '--enable-source-maps  --max-semi-space-size=64'), [MEMORY_REDUCER_FLAG], 'sized in NODE_OPTIONS, which the worker inherits')
  t.same(withGatewayNodeFlags(['--min-semi-space-size-extra'], ''), [YOUNG_GENERATION_FLAG, MEMORY_REDUCER_FLAG, '--min-semi-space-size-extra'], 'only the option itself counts')
  t.same(withGatewayNodeFlags(['--memory-reducer'], ''), [YOUNG_GENERATION_FLAG, '--memory-reducer'], 'their --memory-reducer keeps V8\'s default')
  t.same(withGatewayNodeFlags(['--no_memory_reducer'], ''), [YOUNG_GENERATION_FLAG, '--no_memory_reducer'], 'theirs already off: not twice')
  t.same(withGatewayNodeFlags(['--memory-reducer-for-small-heaps'], ''), [YOUNG_GENERATION_FLAG, MEMORY_REDUCER_FLAG, '--memory-reducer-for-small-heaps'], 'another V8 option of a similar name is not the matter')
  t.same(withGatewayNodeFlags(['--max-semi-space-size=4', '--memory-reducer'], ''), ['--max-semi-space-size=4', '--memory-reducer'], 'both settled: none of ours')
})

t.test('npm start and the Docker image start node with the flags (the launches of record)', async (t) => {
  const scripts = (JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  t.equal(scripts.start, `exec node ${GATEWAY_NODE_FLAGS.join(' ')} bin/lanegate.js start`)
  const cmd = readFileSync(repoPath('docker/Dockerfile'), 'utf8').split('\n').find((line) => line.startsWith('CMD '))
  t.equal(cmd, `CMD [${['node', ...GATEWAY_NODE_FLAGS, 'bin/lanegate.js', 'start', '--config', '/app/gateway.yaml'].map((a) => `"${a}"`).join(', ')}]`)
  const operations = readFileSync(repoPath('docs/operations.md'), 'utf8')
  t.match(operations, `NODE_OPTIONS=${YOUNG_GENERATION_FLAG}`, 'the operations guide says how to pass the floor on a launch of one\'s own')
  t.match(operations, `node ${GATEWAY_NODE_FLAGS.join(' ')} bin/lanegate.js start`, 'and the command line with both, which NODE_OPTIONS cannot carry')
})
