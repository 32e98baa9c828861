import { writeFile } from 'node:fs/promises'
import { Agent } from 'undici'

/** The `tls` scenario's gateway serves a self-signed certificate made for the run, on loopback: not verified. */
const unverifiedLoopback = new Agent({ connect: { rejectUnauthorized: false } })

/** The demo accounts the scenarios use (demo secrets are `<client_id>-secret`, published in the README). */
export const CONTENT_CLIENT = 'demo-content'
export const EXCHANGE_CLIENT = 'demo-exchange'
export const PRICING_CLIENT = 'demo-pricing'
/** The API key the api-key gateway flavour gives demo-content (its hash is made at start; bench only). */
export const BENCH_API_KEY = 'bench-api-key-0123456789abcdefghijklmnopqrstuv'

/** The form body of a client-credentials token request for a demo account. */
export function tokenForm (clientId: string): string {
  return new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: `${clientId}-secret` }).toString()
}

/** Obtains one access token from a gateway's token endpoint; throws with the answer when it is not a 200. */
export async function fetchToken (gatewayUrl: string, clientId: string): Promise<string> {
  const response = await fetch(`${gatewayUrl}/oauth/token`, {
    ...(gatewayUrl.startsWith('https:') ? { dispatcher: unverifiedLoopback } : {}),
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: tokenForm(clientId),
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`token request for ${clientId} answered ${response.status}: ${text}`)
  return (JSON.parse(text) as { access_token: string }).access_token
}

/**
 * Issues `count` distinct tokens (each has its own jti/iat) with `concurrency` requests in flight and writes
 * them to `file`, one a line. Returns how long issuing took, in seconds.
 */
export async function issueTokens (gatewayUrl: string, clientId: string, count: number, file: string, concurrency = 64): Promise<number> {
  const started = performance.now()
  const tokens: string[] = new Array(count)
  let next = 0
  async function worker (): Promise<void> {
    while (next < count) {
      const i = next++
      tokens[i] = await fetchToken(gatewayUrl, clientId)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  const distinct = new Set(tokens).size
  if (distinct !== count) throw new Error(`asked for ${count} distinct tokens, got ${distinct}`)
  await writeFile(file, tokens.join('\n') + '\n')
  return (performance.now() - started) / 1000
}
