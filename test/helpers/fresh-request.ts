import { request as httpRequest } from 'node:http'

/** A status and body as text. */
export interface Answer { status: number, body: string }

/**
 * One request on a connection of its own (no keep-alive agent): with `server.workers` > 1 the primary's
 * round-robin hands consecutive requests to different workers, which a pooled connection would not.
 */
export function freshRequest (base: string, path: string, init: { method?: string, token?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, {
      method: init.method ?? 'GET',
      agent: false,
      headers: init.token === undefined ? {} : { authorization: `Bearer ${init.token}` },
    }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}
