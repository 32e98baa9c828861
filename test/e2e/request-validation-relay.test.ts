import { request as httpRequest } from 'node:http'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { startBackend } from '../helpers/upstream-servers.js'
import { validationYaml } from '../helpers/validation-config.js'

/**
 * request-validation on a real `lanegate start` in front of a real backend: the body the step read to check it is
 * relayed byte for byte, sent with Content-Length or chunked in pieces over a real socket; a mismatch is a 400 and
 * a chunked body over max_body_bytes a 413, neither reaching the backend.
 */
interface Answer { status: number, body: string }

function put (base: string, path: string, chunks: string[], chunked: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const length = Buffer.byteLength(chunks.join(''))
    const req = httpRequest(`${base}${path}`, {
      method: 'PUT',
      headers: { 'x-api-key': KEYS.till, 'x-till-id': 'till-1', 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(length) }) },
    }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    // Pieces written one after the other, each flushed on its own (the gateway sees several reads).
    const write = (i: number): void => {
      if (i === chunks.length) {
        req.end()
        return
      }
      req.write(chunks[i], () => setImmediate(() => write(i + 1)))
    }
    write(0)
  })
}

t.test('checked bodies are relayed byte for byte; mismatches and oversize bodies never reach the backend', async (t) => {
  const backend = await startBackend(t, 'pricing')
  backend.handle((req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ te: req.headers['transfer-encoding'] ?? null, length: req.headers['content-length'] ?? null, body }))
  })
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-validation-e2e-'))
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, validationYaml(await apiKeyHashes(), backend.url, 4096, join(dir, 'data')))
  const gateway = await spawnGateway({ config: file, admin: false })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  const note = 'é'.repeat(600)
  const pieces = ['{"amount"', `: 42, "note": "${note.slice(0, 300)}`, `${note.slice(300)}"}`]
  const whole = pieces.join('')

  const sized = await put(gateway.base, '/legacy/pricing/prices/9', pieces, false)
  t.same({ status: sized.status, body: JSON.parse(sized.body) }, { status: 200, body: { te: null, length: String(Buffer.byteLength(whole)), body: whole } })
  const chunked = await put(gateway.base, '/legacy/pricing/prices/9', pieces, true)
  t.same({ status: chunked.status, body: JSON.parse(chunked.body).body }, { status: 200, body: whole })

  const wrong = await put(gateway.base, '/legacy/pricing/prices/9', ['{"amount"', ': "42"}'], true)
  t.same({ status: wrong.status, body: JSON.parse(wrong.body) }, { status: 400, body: { error: 'bad_request', location: 'body', path: '/amount', keyword: 'type', message: 'body /amount must be integer' } })
  const big = await put(gateway.base, '/legacy/pricing/prices/9', ['{"amount": 1, "note": "', 'x'.repeat(3000), 'x'.repeat(3000), '"}'], true)
  t.same({ status: big.status, body: JSON.parse(big.body) }, { status: 413, body: { error: 'payload_too_large', message: 'The request body is larger than this route accepts.' } })
  t.equal(backend.seen.length, 2)
})
