import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import content from '../../src/services/content/index.js'
import { buildIndexes } from '../../src/config/indexes.js'
import { contentServiceConfig, serviceTestConfig } from '../helpers/payments-config.js'
import { repoPath } from '../helpers/paths.js'

function check (dir: string) {
  const config = serviceTestConfig('content', contentServiceConfig(dir))
  return content.check?.(config.services.content as never, config, buildIndexes(config)) ?? []
}

t.test('check(): the shipped fixtures and the demo content folder are valid', async (t) => {
  t.same(check(repoPath('test/fixtures/content')), [])
  t.same(check(repoPath('content')), [])
})

t.test('check(): every problem of an invalid folder is reported with its file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-content-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'a.yaml'), [
    '- { id: a1, type: article, title: T, body: B, organization_id: org_hq, status: draft }',
    '- { id: a1, type: article, title: T, body: B, organization_id: org_hq, status: published }',
    '- { id: a3, type: article, title: T, body: B, organization_id: org_hq, status: live, colour: red }',
    '- { id: a4, type: article, title: T, body: B, organization_id: org_hq, status: draft, valid_from: "2026-01-01" }',
    '- { id: a1, type: notice, title: T, body: B, organization_id: org_hq, status: draft }',
  ].join('\n'))
  await writeFile(join(dir, 'b.json'), '{ nope')
  t.same(check(dir), [
    { path: 'source_dir', message: `${join(dir, 'a.yaml[1]')}: published_at is required when status is published` },
    { path: 'source_dir', message: `${join(dir, 'a.yaml[2]')}: unknown field "colour"` },
    { path: 'source_dir', message: `${join(dir, 'a.yaml[2]')}: status must be equal to one of the allowed values` },
    { path: 'source_dir', message: `${join(dir, 'a.yaml[3]')}: valid_from/valid_to apply to circulars only (kind: circular)` },
    { path: 'source_dir', message: `${join(dir, 'a.yaml[4]')}: duplicate id "a1" (first in a.yaml[0])` },
    { path: 'source_dir', message: `${join(dir, 'b.json')}: cannot parse: ${parseError('{ nope')}` },
  ])
})

t.test('check(): a missing folder is reported', async (t) => {
  const problems = check('/nonexistent/lanegate-content')
  t.equal(problems.length, 1)
  t.match(problems[0]?.message, /cannot read the folder/)
})

function parseError (text: string): string {
  try { JSON.parse(text); return '' } catch (error) { return (error as Error).message }
}
