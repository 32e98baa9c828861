import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { hashSecret as hashOf } from '../secrets/secret-hash.js'
import type { Command } from './command.js'

const USAGE = `lanegate hash-secret [--generate]

Reads a client secret on stdin and prints its scrypt PHC hash, to paste under service_accounts[].secrets[].hash.
  echo -n 'my-secret' | lanegate hash-secret
With --generate, makes a new random 256-bit secret and prints the secret and its hash (store the secret safely;
only the hash goes into gateway.yaml).`

function readStdin (): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk))
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    process.stdin.on('error', reject)
  })
}

/** `lanegate hash-secret [--generate]`: the PHC hash of a secret read from stdin (or of a new one). */
async function hashSecretCommand (args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { generate: { type: 'boolean', default: false } } })
  if (values.generate) {
    const secret = randomBytes(32).toString('base64url')
    console.log(`secret: ${secret}`)
    console.log(`hash:   ${await hashOf(secret)}`)
    return 0
  }
  const secret = (await readStdin()).replace(/\r?\n$/, '')
  if (secret.length === 0) {
    console.error('hash-secret: no secret on stdin (echo -n SECRET | lanegate hash-secret)')
    return 1
  }
  console.log(await hashOf(secret))
  return 0
}

export const hashSecret: Command = {
  name: 'hash-secret',
  summary: 'Hash a client secret read from stdin, for gateway.yaml',
  usage: USAGE,
  run: hashSecretCommand,
}
