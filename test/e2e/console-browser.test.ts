import { mkdir, mkdtemp, readFile, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import t from 'tap'
import type { Page } from 'playwright-core'
import { horizontalOverflow, openBrowser } from '../helpers/console-browser.js'
import { eventually, lineOf, sendDispatches, sendTraffic, startConsoleGateway, TODAY } from '../helpers/console-gateway.js'

const VIEWS = ['overview', 'routes', 'upstreams', 'clients', 'config', 'dispatches'] as const

/** Where the screenshots go: LANEGATE_CONSOLE_SCREENSHOTS (docs/console to refresh the docs' images), else a temp dir. */
async function screenshotDir (): Promise<string> {
  const wanted = process.env.LANEGATE_CONSOLE_SCREENSHOTS
  const dir = wanted === undefined || wanted === '' ? await mkdtemp(join(tmpdir(), 'lanegate-console-shots-')) : resolve(wanted)
  await mkdir(dir, { recursive: true })
  return dir
}

/** Opens a view and waits until the page has refreshed it from the gateway at least once. */
async function openView (page: Page, admin: string, view: string): Promise<void> {
  await page.goto(`${admin}/#${view}`)
  await page.waitForFunction((name) => document.body.dataset.loaded?.startsWith(`${name} `) === true, view, { timeout: 30_000 })
}

async function stat$ (page: Page, name: string): Promise<number> {
  return Number(await page.locator(`[data-stat="${name}"]`).first().textContent())
}

function chainText (chain: Array<{ policy: string, summary: string }>): string {
  return chain.length === 0 ? '(gateway endpoint, no policy chain)' : chain.map((l) => `${l.policy}(${l.summary})`).join(' → ')
}

/** The lines the routes view lists under the chain of the console gateway's list_prices route (its transform). */
const TRANSFORM_LINES = ['request query: rename cur → currency', 'request query: remove debug', 'response headers: set x-prices-via = lanegate']

t.test('the console in a real headless Chromium against a real lanegate start', async (t) => {
  const c = await startConsoleGateway(t)
  const { admin } = c
  const browser = await openBrowser(t)
  const { page } = browser
  const shots = await screenshotDir()

  t.test('every view loads', async (t) => {
    for (const view of VIEWS) {
      await openView(page, admin, view)
      t.equal(await page.locator(`#view-${view}`).isVisible(), true, `${view} shown`)
    }
    // The dispatches view, before any dispatch: a sentence, not a table of headers alone.
    t.equal(await page.locator('#dispatches-none').isVisible(), true, 'no dispatch yet: said')
    t.equal(await page.locator('#dispatches-table').isVisible(), false, 'no empty table')
  })

  t.test('traffic shows in the overview within 3 s: a 201, a 403, 429s and a lane 502', async (t) => {
    await openView(page, admin, 'overview')
    const before = { s2: await stat$(page, 'status.2xx'), s4: await stat$(page, 'status.4xx'), s5: await stat$(page, 'status.5xx'), limited: await stat$(page, 'limited'), up: await stat$(page, 'upstream_errors') }
    const traffic = await sendTraffic(c.gw.base)
    t.same(traffic.statuses.slice(0, 2), [201, 403])
    t.equal(traffic.statuses.at(-1), 502)
    const sent = Date.now()
    await eventually(async () => {
      const now = { s2: await stat$(page, 'status.2xx'), s4: await stat$(page, 'status.4xx'), s5: await stat$(page, 'status.5xx'), limited: await stat$(page, 'limited'), up: await stat$(page, 'upstream_errors') }
      return now.s2 >= before.s2 + 4 && now.s4 >= before.s4 + 1 + traffic.limited && now.s5 >= before.s5 + 1 &&
        now.limited === before.limited + traffic.limited && now.up >= before.up + 1
        ? now
        : undefined
    }, 3_000, 'the overview numbers')
    t.ok(Date.now() - sent <= 3_500, 'within 3 s')
    t.equal(await page.locator('#limited-table tr[data-limit="payments-per-ip"] td').nth(1).textContent(), String(traffic.limited))
    const overview = await (await fetch(`${admin}/api/console/overview`)).json() as { totals: { requests: number } }
    t.ok(await stat$(page, 'requests') >= overview.totals.requests - 1 && overview.totals.requests > 0, 'the Requests card is the 15 minutes\' total')
    // Not hovered, each chart's legend shows its latest second (it read "time: --"), as a wall-clock time.
    const legends = await page.locator('.chart .u-legend .u-series:first-child .u-value').allTextContents()
    t.equal(legends.length, 4, 'four charts')
    t.match(legends, legends.map(() => /^\d{2}:\d{2}:\d{2}$/), `legends read a time: ${legends.join(', ')}`)
    const rps = await page.locator('#chart-rps .u-legend .u-series').nth(1).locator('.u-value').textContent()
    t.match(rps, /^\d+$/, `the req/s legend holds the latest second's count (${rps})`)
    await page.waitForTimeout(1_200) // one more point on the charts for the screenshot
    await page.screenshot({ path: join(shots, 'overview.png'), fullPage: true })
  })

  t.test('the routes table holds exactly the rows of `lanegate routes --json`', async (t) => {
    await openView(page, admin, 'routes')
    const cli = JSON.parse(await c.cli('routes', '--config', c.config.file, '--json')) as { routes: Array<{ methods: string[], path: string, service: string, route: string, envelope: string, chain: Array<{ policy: string, summary: string }> }> }
    const rows = await page.locator('#routes-table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent ?? '')))
    const transforms = (r: { route: string }) => r.route === 'list_prices' ? TRANSFORM_LINES.join('') : ''
    t.same(rows, cli.routes.map((r) => [r.methods.join(','), r.path, r.service, r.route, r.envelope, chainText(r.chain) + transforms(r)]))
    t.same(await page.locator('#routes-table tr[data-route="pricing/list_prices"] .details li').allTextContents(), TRANSFORM_LINES, 'a route\'s transform changes, listed under its chain')
    // A chain breaks between policies only: each policy's text sits on one line.
    const links = await page.locator('#routes-table .chain .link').evaluateAll((nodes) => nodes.map((n) => n.getClientRects().length))
    t.equal(links.length, cli.routes.reduce((n, r) => n + r.chain.length, 0), 'one piece per policy of every chain')
    t.same(links.filter((lines) => lines !== 1), [], 'no policy split across lines')
    await page.fill('#routes-filter', 'pricing')
    const filtered = await page.locator('#routes-table tbody tr').count()
    t.equal(filtered, cli.routes.filter((r) => r.service === 'pricing').length, 'the filter keeps the pricing routes')
    await page.fill('#routes-filter', 'currency')
    t.same(await page.locator('#routes-table tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.route)), ['pricing/list_prices'], 'the filter reads the transform\'s changes')
    await page.fill('#routes-filter', '')
  })

  t.test('the explain form answers what `lanegate explain` says, for an allowed and a refused case', async (t) => {
    await openView(page, admin, 'routes')
    for (const [client, method, path] of [['demo-pricing', 'GET', '/legacy/pricing/prices/000123'], ['demo-status', 'POST', '/api/v1/ecommerce/payment-intents']] as const) {
      const cli = JSON.parse(await c.cli('explain', '--config', c.config.file, '--json', '--client', client, method, path)) as { result: { outcome: string, at?: string, status?: number, code?: string }, steps: Array<{ policy: string, outcome: string }> }
      await page.fill('#explain-client', client)
      await page.selectOption('#explain-method', method)
      await page.fill('#explain-path', path)
      await page.evaluate(() => { delete document.querySelector<HTMLElement>('#explain-verdict')?.dataset.outcome })
      await page.click('#explain-form button[type=submit]')
      await page.waitForFunction(() => document.querySelector<HTMLElement>('#explain-verdict')?.dataset.outcome !== undefined)
      const shown = await page.locator('#explain-verdict').evaluate((node: HTMLElement) => ({ ...node.dataset }))
      t.same(shown, { outcome: cli.result.outcome, at: cli.result.at ?? '', status: cli.result.status === undefined ? '' : String(cli.result.status), code: cli.result.code ?? '' }, `${client} ${method} ${path}`)
      const steps = await page.locator('#explain-steps tbody tr').evaluateAll((trs) => trs.map((tr) => ({ policy: (tr as HTMLElement).dataset.policy, outcome: (tr as HTMLElement).dataset.outcome })))
      t.same(steps, cli.steps.map((s) => ({ policy: s.policy, outcome: s.outcome })))
    }
    t.equal(await page.locator('#explain-verdict').textContent(), 'payments/create_intent: refused at scope with 403 forbidden')
    await page.screenshot({ path: join(shots, 'routes.png'), fullPage: true })
  })

  t.test('a pasted token shows its caller and each route\'s verdict as the JSON says; a garbage one its refusal', async (t) => {
    await openView(page, admin, 'routes')
    const issued = await fetch(`${c.gw.base}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-status', client_secret: 'demo-status-secret' }) })
    const token = (await issued.json() as { access_token: string }).access_token
    const check = async (pasted: string): Promise<string | undefined> => {
      await page.fill('#token-input', pasted)
      await page.evaluate(() => { delete document.querySelector<HTMLElement>('#token-verdict')?.dataset.outcome })
      await page.click('#token-form button[type=submit]')
      await page.waitForFunction(() => document.querySelector<HTMLElement>('#token-verdict')?.dataset.outcome !== undefined)
      return await page.locator('#token-verdict').getAttribute('data-outcome') ?? undefined
    }
    t.equal(await check(`Bearer ${token}`), 'verified')
    const api = await (await fetch(`${admin}/api/console/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })).json() as { routes: Array<{ method: string, service: string, route: string, outcome: string }> }
    const shown = await page.locator('#token-routes tbody tr').evaluateAll((trs) => trs.map((tr) => ({ ...(tr as HTMLElement).dataset })))
    t.same(shown, api.routes.map((r) => ({ route: `${r.service}/${r.route}`, method: r.method, outcome: r.outcome })), 'one row per route and method, as the JSON says')
    t.equal(await page.locator('#token-routes tr[data-route="payments/create_intent"] td').nth(4).textContent(), '403 forbidden')
    t.equal(await page.locator('#token-caller tr[data-field="client"] td').nth(1).textContent(), 'demo-status')
    t.equal(await check('not-a-token'), 'refused')
    t.equal(await page.locator('#token-verdict').textContent(), 'Refused: a request with this token gets 401 unauthenticated (The access token is malformed)')
  })

  t.test('stopping a proxy target turns it "ejected" on the upstreams view', async (t) => {
    await openView(page, admin, 'upstreams')
    const row = (url: string): string => `#upstreams-table tr[data-upstream="pricing"][data-target="${url}"]`
    await page.waitForSelector(`${row(c.pricing[0].url)}[data-state="healthy"]`, { timeout: 15_000 })
    await c.pricing[0].close()
    await page.waitForSelector(`${row(c.pricing[0].url)}[data-state="ejected"]`, { timeout: 15_000 })
    t.equal(await page.locator(`${row(c.pricing[1].url)}`).getAttribute('data-state'), 'healthy', 'the other stays healthy')
    t.match(await page.locator(row(c.pricing[0].url)).textContent(), /failed .* \(GET \/health failed: \w+\)/)
    // The upstream's own cells (name, kind, calls, errors, p99 of all its calls) span both target rows.
    t.equal(await page.locator('#upstreams-table tr[data-upstream="pricing"] td[rowspan="2"]').count(), 5, 'pricing\'s cells span its two targets')
    t.same(await page.locator('#upstreams-table thead th').allTextContents(), ['Upstream', 'Kind', 'Calls / min', 'Errors / min', 'p99 (1 min)', 'Target', 'State', 'In flight', 'Last probe', 'Circuit'])
    // Lanes have no health checks: store 001's lane (a 502 a moment ago) is "unchecked", not "healthy".
    t.equal(await page.locator('#upstreams-table tr[data-upstream="org_store_001"]').getAttribute('data-state'), 'unchecked')
    const lane = await page.locator('#upstreams-table tr[data-upstream="org_store_001"] td').allTextContents()
    t.same(lane.slice(0, 2), ['org_store_001', 'lane'])
    t.match(lane.slice(2, 4), [/^\d+$/, /^\d+$/], 'calls and errors a minute: plain numbers under their own headers (no bare "0 of 1")')
    await page.screenshot({ path: join(shots, 'upstreams.png'), fullPage: true })
  })

  t.test('clients and limits', async (t) => {
    await openView(page, admin, 'clients')
    t.equal(await page.locator('#clients-table tr[data-client="demo-status"] td').nth(5).textContent(), '1', 'demo-status: one 403')
    t.equal(await page.locator('#limits-table tr[data-limit="payments-per-ip"][data-key="127.0.0.1"]').getAttribute('data-remaining'), '0')
    const remaining = await page.locator('#limits-table tbody tr td:nth-child(5)').allTextContents()
    t.ok(remaining.length >= 3, 'every limit has a row')
    t.same(remaining.filter((r) => !/^\d+ of \d+$/.test(r)), [], `Remaining reads "N of M" on every row: ${remaining.join(', ')}`)
    await page.screenshot({ path: join(shots, 'clients.png'), fullPage: true })
  })

  t.test('a broken edit of gateway.yaml shows its error with path and line; a good edit the new version', async (t) => {
    await openView(page, admin, 'config')
    const points = 'rate_limits.payments-per-ip.points'
    await c.config.write(c.fixture.set(points, -5))
    await page.waitForSelector('#config-problem-list li', { timeout: 15_000 })
    const line = await lineOf(c.config.file, 'payments-per-ip: { key: ip')
    t.match(await page.locator('#config-problem-list li').allTextContents(), [new RegExp(`gateway\\.yaml:${line} rate_limits\\.payments-per-ip\\.points: `)])
    t.equal(await page.locator('#config-facts-version').textContent(), '1')
    await page.screenshot({ path: join(shots, 'config-rejected.png'), fullPage: true })
    await c.config.write(c.fixture.set(points, 6))
    await page.waitForFunction(() => document.querySelector('#config-facts-version')?.textContent === '2', undefined, { timeout: 15_000 })
    t.equal(await page.locator('#config-problems').isHidden(), true, 'the problems are gone')
    // The header comes from the overview, read just before the config view in each refresh: one round later at most.
    await page.waitForFunction(() => document.querySelector('#config-version')?.textContent === '2', undefined, { timeout: 15_000 })
    t.pass('the header shows the new version')
    // The applied reload says what changed; "Loaded" is when version 2 was loaded, not the process start.
    await page.waitForSelector('#reloads-table tr[data-outcome="applied"]', { timeout: 15_000 })
    t.equal(await page.locator('#reloads-table tr[data-outcome="applied"] td').nth(3).textContent(), 'changed: rate_limits.payments-per-ip.points')
    const json = await (await fetch(`${admin}/api/console/config`)).json() as { loaded_at: string, reloads: Array<{ at: string, outcome: string }> }
    const applied = json.reloads.find((r) => r.outcome === 'applied')
    t.equal(json.loaded_at, applied?.at, 'loaded_at is the applied reload\'s time')
    t.not(json.loaded_at, json.reloads.at(-1)?.at, 'not the start\'s')
    await page.screenshot({ path: join(shots, 'config.png'), fullPage: true })
  })

  t.test('dispatches', async (t) => {
    const [committed, failed] = await sendDispatches(c.gw.base)
    await openView(page, admin, 'dispatches')
    t.equal(await page.locator('#dispatches-disabled').isHidden(), true, 'the demo serves fan-out')
    await page.waitForSelector(`#dispatches-table tr[data-dispatch="${failed}"]`, { timeout: 15_000 })
    t.same(await page.locator('#dispatches-table tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.dispatch)), [failed, committed], 'newest first')
    t.match(await page.locator(`#dispatches-table tr[data-dispatch="${committed}"]`).textContent(), /org_store_002: preview ok, applied/)
    t.equal(await page.locator('#dispatch-statuses [data-status="committed"] .value').textContent(), '1')
    await page.screenshot({ path: join(shots, 'dispatches.png'), fullPage: true })
  })

  t.test('a secret created today: every time on every view reads as a time, none is redacted', async (t) => {
    const yaml = await readFile(c.config.file, 'utf8')
    t.match(yaml, new RegExp(`created: "?${TODAY}"?`), 'the config holds a secret created today')
    await openView(page, admin, 'upstreams')
    await page.waitForSelector('#upstreams-table tr[data-upstream="pricing"]:has-text("passed")', { timeout: 15_000 })
    for (const view of ['config', 'upstreams', 'dispatches']) {
      await openView(page, admin, view)
      const text = await page.locator(`#view-${view}`).innerText()
      t.same(['Invalid Date', 'NaN', '[redacted]'].filter((bad) => text.includes(bad)), [], `${view} shows no broken time`)
    }
    await openView(page, admin, 'config')
    const loaded = await page.locator('#config-facts-loaded').textContent() ?? ''
    t.match(loaded, /\d.*\(\d+ (s|min) ago\)$/, `Config "Loaded" is a time: ${loaded}`)
    const json = await (await fetch(`${admin}/api/console/config`)).json() as { reloads: Array<{ at: string }> }
    t.ok(json.reloads.length > 0 && json.reloads.every((r) => r.at.startsWith(`${TODAY}T`)), 'the reload times are today\'s, whole')
  })

  t.test('no console error, no failed request, nothing requested beyond 127.0.0.1', async (t) => {
    t.same(browser.errors, [])
    t.same(browser.failed, [])
    const outside = browser.requested.filter((url) => !url.startsWith(`${admin}/`) && !url.startsWith('data:'))
    t.same(outside, [])
    t.ok(browser.requested.some((url) => url === `${admin}/console/uPlot.iife.min.js`), 'the chart library came from the gateway')
    for (const name of ['overview', 'routes', 'upstreams', 'clients', 'config-rejected', 'config', 'dispatches']) {
      t.ok((await stat(join(shots, `${name}.png`))).size > 5_000, `${name}.png saved`)
    }
  })
})

t.test('no table overflows the viewport sideways without scrolling, at 1280×800 and at 390×844', async (t) => {
  const c = await startConsoleGateway(t)
  await sendTraffic(c.gw.base)
  const shots = await screenshotDir()
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    const browser = await openBrowser(t, viewport)
    for (const view of VIEWS) {
      await openView(browser.page, c.admin, view)
      t.same(await horizontalOverflow(browser.page), { page: false, tables: [] }, `${view} at ${viewport.width}×${viewport.height}`)
      if (view === 'overview') {
        // Cards per row: every row full (auto-fill left the ninth card alone on a row at 1280).
        const rows = await browser.page.locator('.overview-cards .card').evaluateAll((cards) => {
          const byTop = new Map<number, number>()
          for (const card of cards) byTop.set(Math.round(card.getBoundingClientRect().top), (byTop.get(Math.round(card.getBoundingClientRect().top)) ?? 0) + 1)
          return [...byTop.values()]
        })
        t.same(rows, viewport.width >= 1100 ? [9] : [3, 3, 3], `the nine cards at ${viewport.width}: ${rows.join(' + ')}`)
      }
      if (viewport.width === 390 && (view === 'overview' || view === 'routes')) await browser.page.screenshot({ path: join(shots, `phone-${view}.png`), fullPage: false })
    }
    // The check fails where it should: a table forced wider than the screen, its scrolling box taken away.
    await openView(browser.page, c.admin, 'routes')
    await browser.page.evaluate(() => {
      for (const wrap of Array.from(document.querySelectorAll<HTMLElement>('.table-wrap'))) wrap.style.overflow = 'visible'
      document.querySelector<HTMLElement>('#routes-table')?.style.setProperty('min-width', '2000px')
    })
    t.same(await horizontalOverflow(browser.page), { page: true, tables: ['routes-table'] }, 'a table without its scrolling box is caught')
    t.same(browser.errors, [], 'no console error')
    t.same(browser.failed, [], 'no failed request')
  }
})
