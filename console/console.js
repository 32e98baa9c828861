// lanegate operator console: a read-only page over the admin listener's /api/console/<view> JSON, refreshed once a
// second. Plain browser JavaScript, no build step; the only library is uPlot (served from the gateway's own
// node_modules). Every value is written with textContent: nothing an answer holds is parsed as HTML.
'use strict'
;(function consolePage () {
  const VIEWS = ['overview', 'routes', 'upstreams', 'clients', 'config', 'dispatches', 'fleet']
  const WINDOW_SECONDS = 900
  const $ = (selector) => document.querySelector(selector)

  /** A table cell or any element with text (and optional attributes). */
  function el (tag, text, attributes) {
    const node = document.createElement(tag)
    if (text !== undefined && text !== null) node.textContent = String(text)
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value))
    return node
  }

  function row (cells, attributes) {
    const tr = el('tr', undefined, attributes)
    for (const cell of cells) tr.append(cell instanceof Node ? wrapCell(cell) : el('td', cell))
    return tr
  }

  function wrapCell (node) {
    if (node.tagName === 'TD') return node
    const td = el('td')
    td.append(node)
    return td
  }

  function fill (tbody, rows) {
    tbody.replaceChildren(...rows)
  }

  function badge (text, kind) {
    return el('span', text, { class: `badge ${kind || text}` })
  }

  function ms (value) {
    if (value === null || value === undefined) return '–'
    return value >= 100 ? `${Math.round(value)} ms` : `${value} ms`
  }

  /** A chart time (Unix seconds) as the wall clock reads it, to the second: 14:03:07. */
  function clock (seconds) {
    if (seconds === null || seconds === undefined) return '–'
    return new Date(seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false })
  }

  function ago (iso) {
    if (!iso) return '–'
    const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))
    return seconds < 60 ? `${seconds} s ago` : seconds < 3600 ? `${Math.round(seconds / 60)} min ago` : new Date(iso).toLocaleString()
  }

  async function getJson (path) {
    const res = await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store' })
    const body = await res.json()
    if (!res.ok) throw Object.assign(new Error(body.error || `HTTP ${res.status}`), { status: res.status, body })
    return body
  }

  // ---- Overview ----
  const overview = { series: [], last: 0, charts: {} }

  function chartOptions (id, series) {
    const box = document.getElementById(id)
    return {
      width: Math.max(200, box.clientWidth),
      height: 160,
      legend: { show: true },
      scales: { x: { time: true } },
      // Ticks on whole seconds (a chart of a few seconds ticked every half second read ":14.000 :14.500").
      axes: [{ stroke: '#666', space: 70, incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600], values: (u, splits) => splits.map(clock) },
        { stroke: '#666', size: 50 }],
      series: [{ label: 'time', value: (u, v) => clock(v) },
        ...series.map(([label, stroke]) => ({ label, stroke, width: 1.5, spanGaps: false, value: (u, v) => v === null || v === undefined ? '–' : String(v) }))],
    }
  }

  const CHARTS = {
    'chart-rps': [['req/s', '#2563eb']],
    'chart-latency': [['p50', '#16a34a'], ['p99', '#dc2626']],
    'chart-status': [['2xx', '#16a34a'], ['3xx', '#0891b2'], ['4xx', '#d97706'], ['5xx', '#dc2626']],
    'chart-events': [['429s', '#d97706'], ['upstream errors', '#dc2626'], ['tokens', '#7c3aed']],
  }

  function chartData (id) {
    const s = overview.series
    const t = s.map((p) => p.t)
    switch (id) {
      case 'chart-rps': return [t, s.map((p) => p.rps)]
      case 'chart-latency': return [t, s.map((p) => p.p50_ms), s.map((p) => p.p99_ms)]
      case 'chart-status': return [t, ...['2xx', '3xx', '4xx', '5xx'].map((c) => s.map((p) => p.status[c]))]
      default: return [t, s.map((p) => p.limited), s.map((p) => p.upstream_errors), s.map((p) => p.tokens)]
    }
  }

  function drawCharts () {
    if (typeof window.uPlot !== 'function') return
    for (const [id, series] of Object.entries(CHARTS)) {
      const box = document.getElementById(id)
      if (box.clientWidth === 0) continue
      const data = chartData(id)
      let chart = overview.charts[id]
      if (chart === undefined) {
        chart = new window.uPlot(chartOptions(id, series), data, box)
        overview.charts[id] = chart
      } else {
        chart.setData(data)
      }
      // Not hovered, the legend shows the latest second (it read "time: --" until the pointer came).
      if (!(chart.cursor.left >= 0) && data[0].length > 0) chart.setLegend({ idx: data[0].length - 1 })
    }
  }

  function resizeCharts () {
    for (const [id, chart] of Object.entries(overview.charts)) {
      const box = document.getElementById(id)
      if (box.clientWidth > 0) chart.setSize({ width: box.clientWidth, height: 160 })
    }
  }

  function setStat (name, value) {
    for (const node of document.querySelectorAll(`[data-stat="${name}"]`)) node.textContent = String(value)
  }

  async function refreshOverview () {
    const body = await getJson(`/api/console/overview?since=${overview.last}`)
    $('#config-version').textContent = String(body.config_version)
    const readiness = $('#readiness')
    readiness.textContent = body.ready ? 'ready' : `not ready: ${body.failed.join(', ')}`
    readiness.className = `badge ${body.ready ? 'healthy' : 'ejected'}`
    if (body.workers !== undefined) {
      $('#workers').hidden = false
      $('#workers').textContent = `${body.workers} workers`
    }
    const known = new Set(overview.series.map((p) => p.t))
    for (const point of body.series) {
      if (!known.has(point.t)) overview.series.push(point)
      overview.last = Math.max(overview.last, point.t)
    }
    const oldest = Math.floor(Date.now() / 1000) - WINDOW_SECONDS
    overview.series = overview.series.filter((p) => p.t > oldest).sort((a, b) => a.t - b.t)
    const latest = overview.series[overview.series.length - 1]
    const totals = body.totals
    setStat('rps', latest === undefined ? 0 : latest.rps)
    setStat('requests', totals.requests)
    setStat('p50', ms(totals.p50_ms))
    setStat('p99', ms(totals.p99_ms))
    for (const [cls, n] of Object.entries(totals.status)) setStat(`status.${cls}`, n)
    setStat('limited', Object.values(totals.limited).reduce((a, b) => a + b, 0))
    setStat('upstream_errors', totals.upstream_errors)
    setStat('tokens', totals.tokens)
    fill($('#limited-table tbody'), Object.entries(totals.limited).sort((a, b) => b[1] - a[1])
      .map(([limit, n]) => row([limit, n], { 'data-limit': limit })))
    if (!$('#view-overview').hidden) drawCharts()
  }

  // ---- Routes and explain ----
  let routes = []

  function chainText (chain) {
    return chain.length === 0 ? '(gateway endpoint, no policy chain)' : chain.map((l) => `${l.policy}(${l.summary})`).join(' → ')
  }

  /** The chain as one unbreakable piece per policy: a line breaks between policies, never inside a scope name. */
  function chainCell (chain) {
    const cell = el('span', undefined, { class: 'chain' })
    if (chain.length === 0) {
      cell.textContent = chainText(chain)
      return cell
    }
    chain.forEach((l, i) => {
      if (i > 0) cell.append(' → ')
      cell.append(el('span', `${l.policy}(${l.summary})`, { class: 'link' }))
    })
    return cell
  }

  /** The chain, and under it each link's details in full where its policy gives them (a transform's changes). */
  function chainAndDetails (chain) {
    const cell = el('td')
    cell.append(chainCell(chain))
    for (const link of chain) {
      if (!link.details) continue
      const list = el('ul', undefined, { class: 'details' })
      for (const line of link.details) list.append(el('li', line))
      cell.append(list)
    }
    return cell
  }

  function routeText (r) {
    const details = r.chain.flatMap((l) => l.details || [])
    return [r.methods.join(','), r.path, r.service, r.route, r.envelope, chainText(r.chain), ...details].join(' ').toLowerCase()
  }

  /** `text` in a `tag` that may break a line after each `after` character (a <wbr>: its text stays the same). */
  function breakable (tag, text, after) {
    const node = el(tag)
    text.split(after).forEach((part, i, all) => {
      node.append(el('span', i < all.length - 1 ? `${part}${after}` : part, { class: 'nobr' }))
      if (i < all.length - 1) node.append(el('wbr'))
    })
    return node
  }

  function renderRoutes () {
    const words = $('#routes-filter').value.toLowerCase().split(/\s+/).filter(Boolean)
    const rows = routes.filter((r) => {
      const text = routeText(r)
      return words.every((w) => text.includes(w))
    }).map((r) => row([
      // Method lists and paths may wrap after a comma or a slash, so the chain keeps the room for whole policies.
      breakable('span', r.methods.join(','), ','), breakable('code', r.path, '/'), r.service, r.route, r.envelope, chainAndDetails(r.chain),
    ], { 'data-route': `${r.service}/${r.route}` }))
    fill($('#routes-table tbody'), rows)
  }

  async function refreshRoutes () {
    const body = await getJson('/api/console/routes')
    const text = JSON.stringify(body.routes)
    if (text !== JSON.stringify(routes)) {
      routes = body.routes
      renderRoutes()
    }
  }

  async function explain (event) {
    event.preventDefault()
    const params = new URLSearchParams({ method: $('#explain-method').value, path: $('#explain-path').value.trim() })
    const client = $('#explain-client').value.trim()
    if (client !== '') params.set('client', client)
    const result = $('#explain-result')
    const verdict = $('#explain-verdict')
    result.hidden = false
    try {
      const answer = await getJson(`/api/console/explain?${params}`)
      const r = answer.result
      verdict.dataset.outcome = r.outcome
      verdict.dataset.at = r.at || ''
      verdict.dataset.status = r.status === undefined ? '' : String(r.status)
      verdict.dataset.code = r.code || ''
      const target = answer.route === undefined ? '(no route)' : `${answer.route.service}/${answer.route.route}`
      verdict.textContent = r.outcome === 'refuse'
        ? `${target}: refused at ${r.at} with ${r.status} ${r.code}`
        : r.outcome === 'depends'
          ? `${target}: passes unless ${answer.steps.filter((s) => s.outcome === 'depends' || s.outcome === 'not-explained').map((s) => s.policy).join(' or ')} refuses`
          : `${target}: passes`
      verdict.className = `verdict ${r.outcome}`
      fill($('#explain-steps tbody'), answer.steps.map((s, i) => row([
        i + 1, s.policy, badge(s.outcome, s.outcome), s.status === undefined ? '' : `${s.status} ${s.code || ''}`, s.note,
      ], { 'data-policy': s.policy, 'data-outcome': s.outcome })))
    } catch (error) {
      verdict.dataset.outcome = 'error'
      verdict.textContent = error.message
      verdict.className = 'verdict refuse'
      fill($('#explain-steps tbody'), [])
    }
  }

  /** Posts the pasted token (a POST body, never a URL) and shows its caller and routes, or its refusal. */
  async function checkToken (event) {
    event.preventDefault()
    const result = $('#token-result')
    const verdict = $('#token-verdict')
    result.hidden = false
    try {
      const res = await fetch('/api/console/token', {
        method: 'POST', cache: 'no-store', headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ token: $('#token-input').value }),
      })
      const answer = await res.json()
      if (!res.ok) throw new Error(answer.error || `HTTP ${res.status}`)
      verdict.dataset.outcome = answer.verified ? 'verified' : 'refused'
      if (!answer.verified) {
        const r = answer.refusal
        verdict.textContent = `Refused: a request with this token gets ${r.status} ${r.code}${r.description ? ` (${r.description})` : ''}`
        verdict.className = 'verdict refuse'
        fill($('#token-caller tbody'), [])
        fill($('#token-routes tbody'), [])
        return
      }
      const p = answer.principal
      const life = answer.lifetime
      verdict.textContent = `Verified by ${answer.issuer}`
      verdict.className = 'verdict pass'
      fill($('#token-caller tbody'), [
        ['Subject', p.subject], ['Client', p.client_id], ['Organization', p.organization],
        ['Scopes', p.scopes.join(' ') || '(none)'], ['Token type', p.token_type],
        ['Issued', life.issued_at ? new Date(life.issued_at).toLocaleString() : '–'],
        ['Expires', life.expires_at ? `${new Date(life.expires_at).toLocaleString()} (in ${life.expires_in_seconds} s)` : '–'],
      ].map(([name, value]) => row([name, value], { 'data-field': name.toLowerCase() })))
      fill($('#token-routes tbody'), answer.routes.map((r) => row([
        r.method, breakable('code', r.path, '/'), `${r.service}/${r.route}`, badge(r.outcome, r.outcome),
        r.status === undefined ? '' : `${r.status} ${r.code || ''}`, r.note || '',
      ], { 'data-route': `${r.service}/${r.route}`, 'data-method': r.method, 'data-outcome': r.outcome })))
    } catch (error) {
      verdict.dataset.outcome = 'error'
      verdict.textContent = error.message
      verdict.className = 'verdict refuse'
      fill($('#token-caller tbody'), [])
      fill($('#token-routes tbody'), [])
    }
  }

  // ---- Upstreams ----
  /** Badge colours: a lane's "unchecked" is neither good nor bad news. */
  const STATE_BADGE = { unchecked: 'unused' }

  async function refreshUpstreams () {
    const body = await getJson('/api/console/upstreams')
    const rows = []
    for (const u of body.upstreams) {
      // The upstream's own cells (name, kind, calls, errors, p99: of all its targets' calls) span its target rows.
      const span = { rowspan: u.targets.length, class: 'upstream-cell' }
      u.targets.forEach((t, i) => {
        const probe = t.last_probe === null ? '–' : `${t.last_probe.ok ? 'passed' : 'failed'} ${ago(t.last_probe.at)} (${t.last_probe.detail})`
        const own = i > 0
          ? []
          : [el('td', u.name, span), el('td', u.kind, span), el('td', u.calls_per_min, span), el('td', u.errors_per_min, span), el('td', ms(u.p99_ms), span)]
        const tr = row([...own, el('code', t.url), badge(t.state, STATE_BADGE[t.state]), t.in_flight, probe, t.circuit === undefined ? '–' : badge(t.circuit)],
          { 'data-upstream': u.name, 'data-target': t.url, 'data-state': t.state, 'data-circuit': t.circuit ?? '' })
        rows.push(tr)
      })
    }
    fill($('#upstreams-table tbody'), rows)
    // Traffic splits: each group's upstream (a row above), its weight and share, then the rules that come first.
    const splits = []
    for (const split of body.splits) {
      const where = `${split.service} ${split.at}`
      for (const g of split.groups) {
        splits.push(row([where, g.group, el('code', g.upstream), g.weight ?? '–', g.percent === null ? '–' : `${g.percent} %`, `sticky: ${split.sticky}`],
          { 'data-split': where, 'data-group': g.group }))
      }
      split.rules.forEach((r, i) => splits.push(row([where, r.upstream, '', '', '', `rule ${i + 1}: ${r.match}`], { 'data-split': where, 'data-rule': String(i) })))
    }
    fill($('#splits-table tbody'), splits)
    $('#splits').hidden = splits.length === 0
  }

  // ---- Clients and limits ----
  async function refreshClients () {
    const body = await getJson('/api/console/clients')
    fill($('#clients-table tbody'), body.clients.map((c) => row([
      c.client_id, c.organization, badge(c.status, c.status === 'active' ? 'healthy' : 'ejected'), c.tokens_issued,
      c.refusals['401'] || 0, c.refusals['403'] || 0, c.refusals['429'] || 0,
    ], { 'data-client': c.client_id })))
    const ids = $('#client-ids')
    if (ids.children.length !== body.clients.length) ids.replaceChildren(...body.clients.map((c) => el('option', undefined, { value: c.client_id })))
    const rows = []
    for (const limit of body.limits) {
      if (limit.keys === null) {
        rows.push(row([limit.limit, limit.key, el('span', 'counted in Redis: not listed', { class: 'muted' }), '', '', ''], { 'data-limit': limit.limit }))
        continue
      }
      if (limit.keys.length === 0) rows.push(row([limit.limit, limit.key, el('span', 'no key counted in this window', { class: 'muted' }), '0', `${limit.points} of ${limit.points}`, ''], { 'data-limit': limit.limit }))
      for (const k of limit.keys) {
        rows.push(row([limit.limit, limit.key, el('code', k.key), k.used, `${k.remaining} of ${limit.points}`, `${k.reset_seconds} s`], { 'data-limit': limit.limit, 'data-key': k.key, 'data-remaining': k.remaining }))
      }
    }
    fill($('#limits-table tbody'), rows)
  }

  // ---- Config ----
  /** What a reload did, in words: a rejected edit's problems; an applied one's changed paths and restart needs. */
  function reloadDetails (r) {
    if (r.problems) return r.problems.join('\n')
    const lines = []
    if (r.changed && r.changed.length > 0) lines.push(`changed: ${r.changed.join(', ')}${r.changed_more ? ` and ${r.changed_more} more` : ''}`)
    if (r.restart_required) lines.push(`restart needed for: ${r.restart_required.join(', ')}`)
    return lines.join('\n')
  }

  async function refreshConfig () {
    const body = await getJson('/api/console/config')
    $('#config-facts-version').textContent = String(body.version)
    $('#config-facts-file').textContent = body.file || '(not from a file)'
    $('#config-facts-loaded').textContent = body.loaded_at ? `${new Date(body.loaded_at).toLocaleString()} (${ago(body.loaded_at)})` : '–'
    const last = body.last_reload
    $('#config-facts-last').textContent = last === null ? 'none since start' : `${last.outcome} ${ago(last.at)} (version ${last.version})`
    $('#config-facts-last').dataset.outcome = last === null ? '' : last.outcome
    const problems = last !== null && last.outcome === 'rejected' ? last.problems || [] : []
    $('#config-problems').hidden = problems.length === 0
    fill($('#config-problem-list'), problems.map((p) => el('li', p, { class: 'problem' })))
    fill($('#reloads-table tbody'), body.reloads.map((r) => row([
      new Date(r.at).toLocaleString(), badge(r.outcome, r.outcome === 'rejected' ? 'ejected' : 'healthy'), r.version,
      reloadDetails(r),
    ], { 'data-outcome': r.outcome })))
  }

  // ---- Config: the store's history (a gateway following the config store), a version's diff on click ----
  async function refreshStoreHistory () {
    const on = await followsStore()
    $('#store-history').hidden = !on
    if (!on) return
    const body = await getJson('/config/versions?limit=20')
    fill($('#store-history-table tbody'), body.versions.map((v) => {
      const tr = row([v.version, el('code', v.sha256.slice(0, 12)), new Date(v.createdAt).toLocaleString(), v.author,
        v.rollbackOf === null ? v.message : `${v.message} (rollback to ${v.rollbackOf})`], { 'data-version': v.version, class: 'clickable' })
      tr.addEventListener('click', () => { void showStoreDiff(v.version) })
      return tr
    }))
  }

  async function showStoreDiff (version) {
    const body = await getJson(`/config/versions/${version}/diff`)
    const pre = $('#store-diff')
    pre.textContent = body.diff === '' ? `version ${version}: no change from its parent` : body.diff
    pre.dataset.version = String(version)
    pre.hidden = false
  }

  // ---- Dispatches ----
  async function refreshDispatches () {
    const body = await getJson('/api/console/dispatches')
    $('#dispatches-disabled').hidden = body.enabled
    $('#dispatch-statuses').replaceChildren(...Object.entries(body.by_status).map(([status, n]) => {
      const card = el('div', undefined, { class: 'card', 'data-status': status })
      card.append(el('div', status, { class: 'label' }), el('div', n, { class: 'value' }))
      return card
    }))
    $('#dispatches-none').hidden = !body.enabled || body.latest.length > 0
    $('#dispatches-table').closest('.table-wrap').hidden = body.latest.length === 0
    fill($('#dispatches-table tbody'), body.latest.map((d) => {
      const stores = el('ul', undefined, { class: 'stores' })
      for (const s of d.stores) stores.append(el('li', `${s.store}: preview ${s.preview}${s.delivery ? `, ${s.delivery}` : ''}${s.attempts > 1 ? ` after ${s.attempts} attempts` : ''}${s.error ? ` (${s.error})` : ''}`))
      return row([el('code', d.dispatch_id), d.operation_type, d.client_id, badge(d.status), new Date(d.created_at).toLocaleString(), stores], { 'data-dispatch': d.dispatch_id })
    }))
  }

  // ---- Fleet (the config store's instances; only when this gateway follows one) ----
  let following
  /** Whether this gateway follows a config store, asked once (a failed answer is asked again next time). */
  async function followsStore () {
    if (following === undefined) following = (await getJson('/config/store')).following === true
    return following
  }

  async function refreshFleet () {
    const on = await followsStore()
    $('#fleet-off').hidden = on
    if (!on) {
      fill($('#fleet-table tbody'), [])
      return
    }
    const body = await getJson('/config/fleet')
    $('#fleet-head').textContent = `version ${body.head}`
    $('#fleet-converged').replaceChildren(body.converged ? badge('converged', 'healthy') : badge('not converged', 'ejected'))
    $('#fleet-converged').dataset.converged = String(body.converged)
    fill($('#fleet-table tbody'), body.instances.map((i) => {
      const state = i.refused !== null ? badge(`refused version ${i.refused.version}: ${i.refused.reason}`, 'ejected') : i.converged ? badge('on the head', 'healthy') : badge('behind', 'ejected')
      return row([
        el('code', i.instanceId), i.host, i.pid, i.workers, i.appliedVersion === null ? 'workers differ' : i.appliedVersion,
        i.appliedSince === null ? '–' : ago(new Date(i.appliedSince).toISOString()), ago(new Date(i.lastHeartbeat).toISOString()), state,
      ], { 'data-instance': i.instanceId, 'data-version': i.appliedVersion === null ? '' : i.appliedVersion, 'data-converged': String(i.converged) })
    }))
  }

  // ---- Tabs and the once-a-second loop ----
  const REFRESH = { overview: refreshOverview, routes: refreshRoutes, upstreams: refreshUpstreams, clients: refreshClients, config: async () => { await refreshConfig(); await refreshStoreHistory() }, dispatches: refreshDispatches, fleet: refreshFleet }

  function current () {
    const name = location.hash.replace('#', '')
    return VIEWS.includes(name) ? name : 'overview'
  }

  function show () {
    const name = current()
    for (const view of VIEWS) {
      $(`#view-${view}`).hidden = view !== name
      $(`[data-tab="${view}"]`).classList.toggle('active', view === name)
    }
    void tick()
  }

  let running = false
  /** The overview (for the header) and the view on screen; a slow answer delays the next round, never doubles it. */
  async function tick () {
    if (running) return
    running = true
    const name = current()
    try {
      await refreshOverview()
      if (name !== 'overview') await REFRESH[name]()
      if (name === 'overview') drawCharts()
      $('#offline').hidden = true
      document.body.dataset.loaded = `${name} ${Date.now()}`
    } catch (error) {
      $('#offline').hidden = false
      $('#offline').textContent = error.status === 401 ? 'Not signed in to the admin listener: reload the page to sign in.' : `The gateway does not answer (${error.message}); retrying every second.`
    } finally {
      running = false
    }
  }

  $('#routes-filter').addEventListener('input', renderRoutes)
  $('#explain-form').addEventListener('submit', explain)
  $('#token-form').addEventListener('submit', checkToken)
  window.addEventListener('hashchange', show)
  window.addEventListener('resize', resizeCharts)
  show()
  setInterval(() => { void tick() }, 1000)
})()
