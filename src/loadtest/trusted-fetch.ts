import { rootCertificates } from 'node:tls'
import { Agent, fetch as undiciFetch } from 'undici'
import { readCaBundle } from '../config/tls-files.js'

/**
 * A `fetch` that trusts the CA certificates of a PEM file beside the system's (`lanegate loadtest --cacert`), for
 * a gateway whose certificate a private CA signed. Node's own `fetch` trusts only its bundled roots (or
 * NODE_EXTRA_CA_CERTS, read once at process start); this agent adds the file's certificates for this run only.
 */
export async function fetchTrusting (caFile: string): Promise<typeof globalThis.fetch> {
  let pem: Buffer
  try {
    pem = readCaBundle(caFile)
  } catch (error) {
    throw new Error(`--cacert ${(error as Error).message}`)
  }
  // Node's roots and the file's: an agent given `ca` alone would trust nothing else (as backend-tls.ts does it).
  const dispatcher = new Agent({ connect: { ca: [...rootCertificates, pem.toString('latin1')] } })
  return function trustedFetch (input, init) {
    return undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...init as Parameters<typeof undiciFetch>[1], dispatcher }) as unknown as Promise<Response>
  }
}
