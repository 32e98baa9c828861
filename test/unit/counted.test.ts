import t from 'tap'
import { counted } from '../../src/errors/counted.js'
import { ConfigError } from '../../src/config/config-error.js'

t.test('a count agrees with its noun', async (t) => {
  t.same([counted(0, 'error'), counted(1, 'error'), counted(2, 'error'), counted(1, 'entry', 'entries'), counted(3, 'entry', 'entries')],
    ['0 errors', '1 error', '2 errors', '1 entry', '3 entries'])
})

t.test('a config error counts its problems in agreement', async (t) => {
  t.match(new ConfigError('g.yaml', [{ path: 'a', message: 'x' }]).message, /^g\.yaml: 1 configuration error\n/)
  t.match(new ConfigError('g.yaml', [{ path: 'a', message: 'x' }, { path: 'b', message: 'y' }]).message, /^g\.yaml: 2 configuration errors\n/)
})
