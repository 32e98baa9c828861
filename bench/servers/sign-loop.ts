import { createPrivateKey, sign } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { signingAlgorithm } from '../../src/oauth/compact-jws.js'

/**
 * Variant `token-sign-only` of the token scenario: the gateway's signing key (`--key-file`) signing the signing
 * input of a token the gateway issued (`--signing-input`, its header and payload) with `crypto.sign`, as
 * src/oauth/compact-jws.ts does, in a loop. `GET /loop?seconds=S` loops that long and answers how many signatures
 * it made; the CPU is read outside, so a token's CPU less one signature's comes from the same rounds.
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, 'key-file': { type: 'string' }, 'signing-input': { type: 'string' } } })
const keyObject = createPrivateKey(readFileSync(values['key-file'] ?? ''))
const signingInput = values['signing-input'] ?? ''
const input = Buffer.from(signingInput)

// The token's own header names its algorithm; compact-jws.ts's table says how node:crypto signs with it.
const { alg } = JSON.parse(Buffer.from(signingInput.split('.')[0] ?? '', 'base64url').toString()) as { alg: string }
const algorithm = signingAlgorithm(alg)
if (algorithm === undefined) throw new Error(`the gateway does not sign with ${alg}`)
const digest = algorithm.digest
const key = algorithm.dsaEncoding === undefined ? keyObject : { key: keyObject, dsaEncoding: algorithm.dsaEncoding }

const server = createServer(function loop (request, response) {
  const seconds = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('seconds'))
  const until = performance.now() + seconds * 1000
  let signatures = 0
  while (performance.now() < until) {
    sign(digest, input, key)
    signatures++
  }
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ signatures }))
})
server.listen(Number(values.port), '127.0.0.1')
process.on('SIGTERM', () => { server.close(); process.exit(0) })
