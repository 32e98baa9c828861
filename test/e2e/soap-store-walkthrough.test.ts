import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { startSoapStoreSimulator, type SoapStoreSimulator } from '../simulators/soap-store-simulator.js'

/**
 * docs/walkthrough-soap.md, end to end: examples/gateway.soap-store.yaml on a real `lanegate start` in front of the
 * demo SOAP store simulator; the walkthrough's calls get the JSON it shows.
 */
let gateway: SpawnedGateway
let store: SoapStoreSimulator
let token: string

t.before(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'lanegate-soap-e2e-'))
  store = await startSoapStoreSimulator({ version: '1.1' })
  gateway = await spawnGateway({ config: repoPath('examples/gateway.soap-store.yaml'), env: { LANEGATE_DATA_DIR: dataDir, LANEGATE_ADMIN_PORT: '0', STORE_SOAP_URL: `${store.url}/store` } })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await store.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-content', client_secret: 'demo-content-secret' })
  const res = await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })
  token = ((await res.json()) as { access_token: string }).access_token
})

async function call (method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number, type: string | null, body: unknown }> {
  const res = await fetch(`${gateway.base}/store-api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, type: res.headers.get('content-type'), body: await res.json() }
}

t.test('the walkthrough\'s calls: an item, a reservation, a reservation the store refuses with a Fault, a bad body', async (t) => {
  t.same(await call('GET', '/items/sku-100'), { status: 200, type: 'application/json; charset=utf-8', body: { sku: 'sku-100', name: 'Sourdough loaf', price: 4.2, in_stock: 12 } })
  t.same(await call('POST', '/items/sku-200/reservations', { quantity: 2 }), { status: 200, type: 'application/json; charset=utf-8', body: { reservation: 'R-1', left: 1 } })
  t.same(await call('POST', '/items/sku-200/reservations', { quantity: 5 }), {
    status: 500,
    type: 'application/json; charset=utf-8',
    body: { error: 'upstream_error', upstream_status: 500, upstream_body: '', fault_code: 'soap:Client', fault_string: 'Not enough stock of sku-200: 1 left, 5 asked', message: 'The upstream answered with a SOAP Fault: Not enough stock of sku-200: 1 left, 5 asked' },
  })
  t.same(await call('POST', '/items/sku-200/reservations', { quantity: 0 }), {
    status: 400,
    type: 'application/json; charset=utf-8',
    body: { error: 'bad_request', location: 'body', path: '/quantity', keyword: 'minimum', message: 'body /quantity must be >= 1' },
  })
  t.equal(store.seen.length, 3, 'the invalid body never reached the store')
})
