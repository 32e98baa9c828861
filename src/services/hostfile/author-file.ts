import { createHash } from 'node:crypto'
import { GatewayError } from '../../plugin/gateway-error.js'
import { isRecordType, recordTypeSpec, supportedRecordTypes, type RecordType } from './record-types.js'
import { orderByTier, tierOf } from './ordering.js'
import { renderValue, validateRecordFields } from './validate-record.js'

/** The `format` of the files this module writes; bumped if the line layout ever changes. */
export const HOSTFILE_FORMAT = 'pipe-delimited/v1'

const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const ACTION_CODE = /^[A-Z]$/

/** The 200 body of `POST /v1/hostfile/files/author`. */
export interface AuthoredHostFile {
  file_name: string
  format: string
  /** One line per record, `TYPE|ACTION|field|…` in the type's declared field order, each line ending in LF. */
  content: string
  /** Record type → number of records of that type in the file (types with none are left out). */
  record_counts: Record<string, number>
  total_records: number
  /** SHA-256 of `content` (UTF-8), lower-case hex. */
  checksum: string
}

export interface AuthorOptions {
  maxRecords: number
}

interface PlacedRecord {
  index: number
  tier: number
  type: RecordType
  action: string
  record: Record<string, unknown>
}

/**
 * Validates a submitted body and writes the host file. The body is `{records: [...], file_name?}`; records are
 * checked in submission order and the FIRST failing row is reported (its every field problem at once), so a
 * client fixes rows top to bottom. Throws GatewayError: `validation_failed` (body shape),
 * `hostfile_too_many_records`, `hostfile_record_validation_failed`, `hostfile_unknown_record_type`,
 * `hostfile_unorderable_record`.
 */
export function authorHostFile (body: unknown, options: AuthorOptions): AuthoredHostFile {
  const { records, fileName } = checkBodyShape(body)
  if (records.length > options.maxRecords) {
    throw new GatewayError('hostfile_too_many_records', {
      message: `A host file holds at most ${options.maxRecords} records; this one has ${records.length}.`,
      fields: { max_records: options.maxRecords, record_count: records.length },
    })
  }

  const placed = records.map((record, index) => placeRecord(record, index))
  const lines = orderByTier(placed).map(renderLine)
  const content = lines.join('')
  const checksum = createHash('sha256').update(content, 'utf8').digest('hex')

  const counts: Record<string, number> = {}
  for (const type of supportedRecordTypes) {
    const n = placed.filter((p) => p.type === type).length
    if (n > 0) counts[type] = n
  }
  return {
    file_name: fileName ?? `hostfile-${checksum.slice(0, 16)}.txt`,
    format: HOSTFILE_FORMAT,
    content,
    record_counts: counts,
    total_records: placed.length,
    checksum,
  }
}

function checkBodyShape (body: unknown): { records: Record<string, unknown>[], fileName?: string } {
  const invalid = (field: string, message: string): GatewayError => new GatewayError('validation_failed', {
    message: `The body must be {records: [...]}: ${field} ${message}.`,
    fields: { errors: { [field]: [message] } },
  })
  if (!isPlainObject(body)) throw invalid('body', 'must be a JSON object')
  for (const key of Object.keys(body)) {
    if (key !== 'records' && key !== 'file_name') throw invalid(key, 'is not allowed')
  }
  const { records, file_name: fileName } = body
  if (records === undefined) throw invalid('records', 'is required')
  if (!Array.isArray(records)) throw invalid('records', 'must be an array')
  if (records.length === 0) throw invalid('records', 'must hold at least one record')
  const notObject = records.findIndex((r) => !isPlainObject(r))
  if (notObject !== -1) throw invalid(`records[${notObject}]`, 'must be a JSON object')
  if (fileName !== undefined && (typeof fileName !== 'string' || !FILE_NAME.test(fileName))) {
    throw invalid('file_name', 'must be 1 to 64 letters, digits, ., _ or -, starting with a letter or digit')
  }
  return { records: records as Record<string, unknown>[], fileName: fileName as string | undefined }
}

/** Checks one row (type, action, fields, in that order) and finds its tier; throws on the row's first problem kind. */
function placeRecord (record: Record<string, unknown>, index: number): PlacedRecord {
  const type = record.record_type
  const action = record.action_code
  if (typeof type !== 'string') {
    throw recordInvalid(null, index, { record_type: [type === undefined || type === null ? 'is required' : 'must be a string'] })
  }
  if (!isRecordType(type)) {
    throw new GatewayError('hostfile_unknown_record_type', {
      message: `Record ${index} has record_type "${type}", which is not a known host-file record type.`,
      fields: { record_type: type, supported_types: [...supportedRecordTypes] },
    })
  }
  if (typeof action !== 'string' || !ACTION_CODE.test(action)) {
    const message = action === undefined || action === null ? 'is required' : 'must be one upper-case letter'
    throw recordInvalid(type, index, { action_code: [message] })
  }
  const tier = tierOf(type, action)
  if (tier === undefined) {
    throw new GatewayError('hostfile_unorderable_record', {
      message: `Record ${index}: a ${type} record with action code ${action} has no place in a host file.`,
      fields: { record_type: type, action_code: action },
    })
  }
  const errors = validateRecordFields(record, type, recordTypeSpec(type), action)
  if (Object.keys(errors).length > 0) throw recordInvalid(type, index, errors)
  return { index, tier, type, action, record }
}

function recordInvalid (recordType: string | null, rowIndex: number, errors: Record<string, string[]>): GatewayError {
  return new GatewayError('hostfile_record_validation_failed', {
    message: `Record ${rowIndex} is invalid.`,
    fields: { record_type: recordType, row_index: rowIndex, errors },
  })
}

function renderLine (placed: PlacedRecord): string {
  const values = recordTypeSpec(placed.type).fields.map((f) => renderValue(placed.record[f.name]))
  return `${[placed.type, placed.action, ...values].join('|')}\n`
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
