import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A small "legacy pricing" HTTP service for the `proxy` service demo (gateway.yaml's `pricing` block, docs/proxy.md):
 * `GET /health`, `GET /prices`, `GET /prices/:sku`, `PUT /prices/:sku` with `{"price":"1.99"}`. Every answer says
 * which instance served it (`served_by`), so balancing is visible. With `credential` set it answers 401 to any
 * other Authorization: the gateway must send its own, never the caller's.
 */
export interface PricingSimulator {
  name: string
  port: number
  url: string
  close (): Promise<void>
}

export interface PricingSimulatorOptions {
  name: string
  port?: number
  host?: string
  /** The Authorization value the gateway must send (the demo's upstream credential). */
  credential?: string
  /** The price table; instances given the same one behave like app servers in front of one database. */
  prices?: Map<string, string>
}

/** The demo's initial price table. */
export function demoPrices (): Map<string, string> {
  return new Map([['000123', '1.99'], ['000456', '4.25'], ['000789', '12.00']])
}

const SKU = /^\/prices\/([A-Za-z0-9._-]{1,64})$/

export async function startPricingSimulator (options: PricingSimulatorOptions): Promise<PricingSimulator> {
  const prices = options.prices ?? demoPrices()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => { answer(req, res, Buffer.concat(chunks).toString('utf8')) })
  })

  function send (res: ServerResponse, status: number, body: Record<string, unknown>): void {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ ...body, served_by: options.name }))
  }

  function answer (req: IncomingMessage, res: ServerResponse, body: string): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    if (path === '/health') return send(res, 200, { status: 'ok' })
    if (options.credential !== undefined && req.headers.authorization !== options.credential) {
      return send(res, 401, { error: 'bad credential' })
    }
    if (path === '/prices' && req.method === 'GET') {
      return send(res, 200, { prices: [...prices].map(([sku, price]) => ({ sku, price })) })
    }
    const sku = SKU.exec(path)?.[1]
    if (sku === undefined) return send(res, 404, { error: 'no such path' })
    if (req.method === 'GET' || req.method === 'HEAD') {
      const price = prices.get(sku)
      return price === undefined ? send(res, 404, { error: `no price for ${sku}` }) : send(res, 200, { sku, price })
    }
    if (req.method === 'PUT') {
      let price: unknown
      try {
        price = (JSON.parse(body) as { price?: unknown }).price
      } catch {
        price = undefined
      }
      if (typeof price !== 'string' || !/^\d{1,5}\.\d{2}$/.test(price)) return send(res, 422, { error: 'price must be a string like "1.99"' })
      prices.set(sku, price)
      return send(res, 200, { sku, price })
    }
    return send(res, 405, { error: 'method not allowed' })
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  return {
    name: options.name,
    port,
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
