import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { openConfigStore } from '../../src/config-store/config-store.js'
import { openBrowser } from '../helpers/console-browser.js'
import { fleetConfig, startFollower } from '../helpers/config-fleet.js'
import { configStoreDb } from '../helpers/config-store-db.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'

/** Opens the Fleet view and waits until the page has refreshed it from the gateway once. */
async function openFleet (page: Page, admin: string): Promise<void> {
  await page.goto(`${admin}/#fleet`)
  await page.waitForFunction(() => document.body.dataset.loaded?.startsWith('fleet ') === true, undefined, { timeout: 30_000 })
}

const db = await configStoreDb()
if (typeof db === 'string') {
  t.test('the console\'s Fleet view', { skip: `${db} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
} else {
  t.teardown(() => db.drop())
  const fleet = fleetConfig()
  const config = await fleet.write()
  t.teardown(() => config.remove())
  const home = await mkdtemp(join(tmpdir(), 'lanegate-fleet-console-'))
  t.teardown(() => rm(home, { recursive: true, force: true }))

  t.test('the Fleet view lists the instances, their version, and a host\'s refusal (not converged)', async (t) => {
    const text = fleet.text()
    const store = await openConfigStore(db.url)
    t.teardown(() => store.close())
    await store.push({ text, message: 'first', author: 'ana' })
    const gw = await startFollower(t, { home, name: 'a', storeUrl: db.url, workers: 1, fleet })
    t.teardown(() => gw.stop())
    const { page, errors } = await openBrowser(t)

    await openFleet(page, gw.admin as string)
    const line = page.locator(`#fleet-table tr[data-instance="${gw.instanceId}"]`)
    await line.waitFor({ timeout: 30_000 })
    t.equal(await line.getAttribute('data-version'), '1')
    t.equal(await page.locator('#fleet-head').textContent(), 'version 1')
    await page.waitForFunction(() => document.querySelector('#fleet-converged')?.getAttribute('data-converged') === 'true', undefined, { timeout: 30_000 })
    t.match(await line.textContent(), /on the head/)
    t.equal(await page.locator('#fleet-off').isVisible(), false)

    // A variable this host lacks: refused here, the view says so and the fleet is not converged.
    await store.push({ text: fleet.set('server.log_level', '${ONLY_ON_OTHER_HOSTS}').text(), message: 'per host', author: 'bo' })
    await page.waitForFunction(() => document.querySelector('#fleet-converged')?.getAttribute('data-converged') === 'false', undefined, { timeout: 30_000 })
    await page.waitForFunction((id) => /refused version 2: .*ONLY_ON_OTHER_HOSTS/.test(document.querySelector(`#fleet-table tr[data-instance="${id}"]`)?.textContent ?? ''), gw.instanceId, { timeout: 30_000 })
    t.equal(await page.locator('#fleet-head').textContent(), 'version 2')
    t.equal(await line.getAttribute('data-version'), '1', 'it still runs version 1')
    t.same(errors, [], 'no console error')

    // The Config view lists the store's history; a version's row shows its diff from its parent.
    await page.goto(`${gw.admin as string}/#config`)
    await page.waitForFunction(() => document.body.dataset.loaded?.startsWith('config ') === true, undefined, { timeout: 30_000 })
    const second = page.locator('#store-history-table tr[data-version="2"]')
    await second.waitFor({ timeout: 30_000 })
    t.match(await second.textContent(), /bo.*per host/)
    await second.click()
    await page.waitForFunction(() => document.querySelector('#store-diff')?.getAttribute('data-version') === '2', undefined, { timeout: 30_000 })
    const diff = await page.locator('#store-diff').textContent() ?? ''
    t.match(diff, /^--- version 1\n\+\+\+ version 2\n@@ [^\n]+ @@\n/)
    t.match(diff, /\n-  log_level: \$\{LANEGATE_LOG_LEVEL:-info\}[^\n]*\n\+  log_level: \$\{ONLY_ON_OTHER_HOSTS\}/)
    t.same(errors, [], 'no console error')
  })

  t.test('a gateway serving its own file says it follows no store', async (t) => {
    const gw = await spawnGateway({ config: config.file, cwd: home })
    t.teardown(async () => { gw.child.kill('SIGTERM'); await gw.exited })
    const { page, errors, failed } = await openBrowser(t)
    await openFleet(page, gw.admin as string)
    t.equal(await page.locator('#fleet-off').isVisible(), true)
    t.equal(await page.locator('#fleet-table tbody tr').count(), 0)
    await page.goto(`${gw.admin as string}/#config`)
    await page.waitForFunction(() => document.body.dataset.loaded?.startsWith('config ') === true, undefined, { timeout: 30_000 })
    t.equal(await page.locator('#store-history').isVisible(), false, 'no store history without a store')
    t.same(failed, [], 'no failed request: the console asks /config/store, not the routes a file-mode gateway lacks')
    t.same(errors, [], 'no console error')
    t.same(errors, [], 'no console error')
  })
}
