import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { repoPath } from '../helpers/paths.js'

const BIN = repoPath('bin/lanegate.js')
const EXAMPLE = repoPath('examples/gateway.soap-store.yaml')

/** Runs the real CLI in a temporary folder (the example's data_dir is ./data there) and collects its output. */
async function run (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const cwd = await mkdtemp(join(tmpdir(), 'lanegate-transform-'))
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
      child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })
  } finally {
    await rm(cwd, { recursive: true, force: true })
  }
}

async function sample (t: Test, name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-sample-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, name)
  await writeFile(file, text)
  return file
}

t.test('transform tries the request side: the SOAP envelope the upstream would get, by POST to its URL', async (t) => {
  const input = await sample(t, 'reserve.json', '{"quantity": 2}')
  const res = await run(['transform', 'POST', '/store-api/v1/items/sku-100/reservations', '--input', input, '--client', 'demo-content', '--config', EXAMPLE])
  t.same(res, {
    code: 0,
    stdout: '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><op:ReserveStock xmlns:op="urn:lanegate:demo:store"><sku>sku-100</sku><quantity>2</quantity></op:ReserveStock></soap:Body></soap:Envelope>\n',
    stderr: 'upstream request: POST (the target\'s URL); content-type: text/xml; charset=utf-8\n',
  })
})

t.test('transform --response tries the answer side: the JSON the caller would get, or the Fault as the refusal it becomes', async (t) => {
  const answer = await sample(t, 'answer.xml', '<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><t:GetItemResponse xmlns:t="urn:lanegate:demo:store"><sku>sku-100</sku><name>Sourdough loaf</name><price>4.20</price><stock>12</stock></t:GetItemResponse></s:Body></s:Envelope>')
  const ok = await run(['transform', 'GET', '/store-api/v1/items/sku-100', '--response', '--input', answer, '--config', EXAMPLE])
  t.same(ok, { code: 0, stdout: '{"sku":"sku-100","name":"Sourdough loaf","price":4.2,"in_stock":12}\n', stderr: 'answer: 200; content-type: application/json; charset=utf-8\n' })
  const fault = await sample(t, 'fault.xml', '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode><faultstring>Unknown item sku-9</faultstring></s:Fault></s:Body></s:Envelope>')
  const refused = await run(['transform', 'GET', '/store-api/v1/items/sku-9', '--response', '--status', '500', '--input', fault, '--config', EXAMPLE])
  t.equal(refused.code, 1)
  t.equal(refused.stderr, 'refused: 500\n')
  t.same(JSON.parse(refused.stdout), { error: 'upstream_error', upstream_status: 500, upstream_body: '', fault_code: 's:Client', fault_string: 'Unknown item sku-9', message: 'The upstream answered with a SOAP Fault: Unknown item sku-9' })
})

t.test('transform says what it could not try: no route, no transform on the route, a bad mapping input', async (t) => {
  const input = await sample(t, 'bad.json', '{"quantity": ')
  const bad = await run(['transform', 'POST', '/store-api/v1/items/sku-100/reservations', '--input', input, '--config', EXAMPLE])
  t.equal(bad.code, 1)
  t.same(JSON.parse(bad.stdout), { error: 'transform_failed', location: 'body', path: '', message: 'The request body is not valid JSON.' })
  const none = await run(['transform', 'GET', '/nowhere', '--input', input, '--config', EXAMPLE])
  t.same(none, { code: 1, stdout: '', stderr: 'transform: no route serves GET /nowhere\n' })
  const plain = await run(['transform', 'GET', '/healthz', '--input', input, '--config', EXAMPLE])
  t.same(plain, { code: 1, stdout: '', stderr: 'transform: route gateway/healthz has no transform policy\n' })
  const usage = await run(['transform', 'GET', '/store-api/v1/items/x', '--config', EXAMPLE])
  t.equal(usage.code, 1)
  t.match(usage.stderr, /^lanegate transform METHOD PATH --input FILE/)
})
