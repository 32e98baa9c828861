import { copyFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import type { SecureContextOptions, Server as TlsServer } from 'node:tls'
import t from 'tap'
import type { ServerTlsConfig } from '../../src/config/types.js'
import { rotateListenerTls } from '../../src/tls/listener-rotation.js'
import { loadListenerTls, type ListenerTls } from '../../src/tls/listener-tls.js'
import { createTestPki } from '../helpers/test-pki.js'

/**
 * The rotation's start (src/tls/listener-rotation.ts): the pair the listener was created with, read at validation,
 * is taken as it is, and the files are read again only when one changed since that read (a certificate renewed
 * while the gateway was starting would otherwise wait for the next change).
 */

const pki = createTestPki('Rotation unit CA')
t.teardown(() => pki.remove())
const first = pki.issue('first', 'localhost')
const second = pki.issue('second', 'localhost')
const tls: ServerTlsConfig = { cert_file: join(pki.dir, 'live.crt'), key_file: join(pki.dir, 'live.key'), min_version: 'TLSv1.2' }

function install (pair: { cert: string, key: string }): void {
  copyFileSync(pair.key, `${tls.key_file}.new`)
  copyFileSync(pair.cert, `${tls.cert_file}.new`)
  renameSync(`${tls.key_file}.new`, tls.key_file)
  renameSync(`${tls.cert_file}.new`, tls.cert_file)
}

/** A listener that records the contexts it is given, and a log that records its lines. */
function harness (): { server: TlsServer, contexts: SecureContextOptions[], lines: string[], loaded: ListenerTls[], logger: { info (f: object, m: string): void, error (f: object, m: string): void } } {
  const contexts: SecureContextOptions[] = []
  const lines: string[] = []
  const server = { setSecureContext (context: SecureContextOptions) { contexts.push(context) } } as unknown as TlsServer
  const logger = {
    info (fields: object, message: string) { lines.push(`${message} ${JSON.stringify(fields)}`) },
    error (fields: object, message: string) { lines.push(`error: ${message}`) },
  }
  return { server, contexts, lines, loaded: [], logger }
}

t.test('the pair read at validation, files unchanged since: announced as it is, nothing read or set again', async (t) => {
  install(first)
  const started = loadListenerTls(tls)
  const h = harness()
  const rotation = rotateListenerTls(h.server, tls, h.logger, (loaded) => h.loaded.push(loaded), { started })
  t.teardown(() => rotation.stop())
  t.same(h.contexts, [])
  t.equal(h.loaded.length, 1)
  t.equal(h.loaded[0], started)
  t.same(h.lines, [`TLS certificate loaded for new connections {"serial":"${first.serial}","not_after":"${started.pair.notAfter.toISOString()}"}`])
})

t.test('a file replaced since the validation read: the files are read again at once and the new pair set', async (t) => {
  install(first)
  const started = loadListenerTls(tls)
  install(second)
  const h = harness()
  const rotation = rotateListenerTls(h.server, tls, h.logger, (loaded) => h.loaded.push(loaded), { started })
  t.teardown(() => rotation.stop())
  t.equal(h.contexts.length, 1)
  t.same(h.loaded.map((loaded) => loaded.pair.serial), [second.serial])
  t.match(h.lines, [new RegExp(`"serial":"${second.serial}"`)])
})
