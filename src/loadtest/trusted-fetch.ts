import { readFile } from 'node:fs/promises'
import { Agent, fetch as undiciFetch } from 'undici'

/**
 * A `fetch` that trusts the CA certificates of a PEM file beside the system's (`lanegate loadtest --cacert`), for
 * a gateway whose certificate a private CA signed. Node's own `fetch` trusts only its bundled roots (or
 * NODE_EXTRA_CA_CERTS, read once at process start); this agent adds the file's certificates for this run only.
 */
export async function fetchTrusting (caFile: string): Promise<typeof globalThis.fetch> {
  let pem: string
  try {
    pem = await readFile(caFile, 'utf8')
  } catch (error) {
    throw new Error(`--cacert ${caFile}: ${(error as Error).message}`)
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`--cacert ${caFile}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
  const dispatcher = new Agent({ connect: { ca: pem } })
  return function trustedFetch (input, init) {
    return undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...init as Parameters<typeof undiciFetch>[1], dispatcher }) as unknown as Promise<Response>
  }
}
