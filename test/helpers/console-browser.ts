import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

/** Debian's chromium (`.ci/run` installs it when missing). */
export const CHROMIUM = '/usr/bin/chromium'

/** Flags for a headless run that asks nothing of the network beyond what the page asks. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync']

interface Teardown {
  teardown (fn: () => unknown): void
}

/** What the browser saw while a test drove it. */
export interface BrowserWatch {
  context: BrowserContext
  page: Page
  /** Console messages of type error, and uncaught page errors. */
  errors: string[]
  /** Requests that failed, or were answered with a 4xx/5xx. */
  failed: string[]
  /** Every URL the browser requested. */
  requested: string[]
}

/**
 * Headless Chromium in a new, empty profile (a fresh --user-data-dir, removed at teardown), watching console
 * errors, failed requests and every URL requested. Throws when /usr/bin/chromium is missing (never skips).
 */
export async function openBrowser (t: Teardown, viewport = { width: 1280, height: 800 }): Promise<BrowserWatch> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`)
  const profile = await mkdtemp(join(tmpdir(), 'lanegate-chromium-'))
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport })
  t.teardown(async () => {
    await context.close()
    await rm(profile, { recursive: true, force: true })
  })
  const watch: BrowserWatch = { context, page: context.pages()[0] ?? await context.newPage(), errors: [], failed: [], requested: [] }
  context.on('request', (request) => { watch.requested.push(request.url()) })
  context.on('requestfailed', (request) => { watch.failed.push(`${request.url()}: ${request.failure()?.errorText ?? 'failed'}`) })
  context.on('response', (response) => { if (response.status() >= 400) watch.failed.push(`${response.url()}: ${response.status()}`) })
  const page = watch.page
  page.on('console', (message) => { if (message.type() === 'error') watch.errors.push(message.text()) })
  page.on('pageerror', (error) => { watch.errors.push(error.message) })
  return watch
}

/**
 * The tables on the page that stick out of the viewport sideways without a scrolling box around them (a
 * `.table-wrap` with `overflow-x: auto`/`scroll` that itself fits), and whether the page itself scrolls
 * sideways. Empty and false on a page a phone shows whole.
 */
export async function horizontalOverflow (page: Page): Promise<{ page: boolean, tables: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth
    const tables: string[] = []
    for (const table of Array.from(document.querySelectorAll('table'))) {
      if (table.offsetParent === null) continue // not on screen (another view)
      const box = table.getBoundingClientRect()
      if (box.right <= width + 0.5 && box.left >= -0.5) continue
      const wrap = table.parentElement
      const scrolls = wrap !== null && ['auto', 'scroll'].includes(getComputedStyle(wrap).overflowX)
      const wrapBox = wrap?.getBoundingClientRect()
      if (!scrolls || wrapBox === undefined || wrapBox.right > width + 0.5 || wrapBox.left < -0.5) tables.push(table.id || '(table)')
    }
    return { page: document.documentElement.scrollWidth > width + 0.5, tables }
  })
}
