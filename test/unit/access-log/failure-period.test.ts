import t from 'tap'
import { FailurePeriod, type SinkHooks } from '../../../src/logging/access-log/sink.js'

t.test('a failing period is told once; a recovery starts the next one', async (t) => {
  const told: Array<[string, unknown]> = []
  const hooks: SinkHooks = { onDropped () {}, onFailure (sink, error) { told.push([sink, error]) } }
  const failures = new FailurePeriod(hooks, 'audit')
  failures.failed(new Error('first'))
  failures.failed(new Error('second'))
  t.same(told.map(([sink, error]) => [sink, (error as Error).message]), [['audit', 'first']], 'only the period\'s first failure')
  failures.recovered()
  failures.recovered()
  failures.failed(new Error('third'))
  t.same(told.map(([, error]) => (error as Error).message), ['first', 'third'], 'a failure after a recovery is told again')
})
