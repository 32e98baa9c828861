/**
 * A client-credentials token from a running gateway at `base` (a real `lanegate start`), for a demo-style client
 * whose secret is `<client>-secret`. Throws with the status and body when the gateway refuses, so a test fails on
 * the cause rather than on an undefined token later.
 */
export async function fetchGatewayToken (base: string, client: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client, client_secret: `${client}-secret` }),
  })
  const body = await res.json() as { access_token?: string }
  if (res.status !== 200 || body.access_token === undefined) throw new Error(`token for ${client}: ${res.status} ${JSON.stringify(body)}`)
  return body.access_token
}
