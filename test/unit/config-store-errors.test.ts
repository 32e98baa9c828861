import t from 'tap'
import pg from 'pg'
import { storeFailure } from '../../src/config-store/errors.js'

// Which PostgreSQL errors a config-store caller may wait out ("unreachable") and which need an operator ("failed").

function databaseError (code: string, message: string): Error {
  const error = new pg.DatabaseError(message, message.length, 'error')
  error.severity = 'FATAL'
  error.code = code
  return error
}

const URL = 'postgres://ops:hunter2@db.example:5432/lanegate'

t.test('a server shutting down, refusing connections or out of slots is unreachable, as a refused socket is', async (t) => {
  for (const [code, message] of [['57P01', 'terminating connection due to administrator command'], ['57P03', 'the database system is starting up'], ['53300', 'sorry, too many clients already'], ['08006', 'connection failure']]) {
    const failure = storeFailure(URL, databaseError(code as string, message as string))
    t.same({ code: failure.code, sqlstate: failure.sqlstate }, { code: 'unreachable', sqlstate: undefined }, code)
  }
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  t.equal(storeFailure(URL, refused).code, 'unreachable', 'a socket error has no SQLSTATE')
})

t.test('an error retrying will not cure is failed, with its SQLSTATE and without the password', async (t) => {
  const failure = storeFailure(URL, databaseError('42501', 'permission denied for schema public'))
  t.same({ code: failure.code, sqlstate: failure.sqlstate }, { code: 'failed', sqlstate: '42501' })
  t.equal(failure.message, 'config store postgres://ops:***@db.example:5432/lanegate answered with an error: permission denied for schema public (SQLSTATE 42501)')
  t.equal(storeFailure(URL, databaseError('3D000', 'database "lanegate" does not exist')).code, 'failed', 'a missing database')
})
