import type { FastifyInstance } from 'fastify'
import { GatewayError } from '../plugin/gateway-error.js'

/** A parsed form body: every value of every parameter, in order, so duplicates stay visible (RFC 6749 §3.2). */
export type FormParameters = ReadonlyMap<string, readonly string[]>

export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded'

/** Token requests are a few short parameters; anything larger is not a token request. */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024

const OWS = /^[ \t]+|[ \t]+$/g
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Whether a Content-Type header names a form body. The media type is compared case-insensitively with optional
 * whitespace (spaces or tabs) around it; parameters are ignored except `charset`, which must be UTF-8 when given.
 */
export function isFormContentType (header: string | undefined): boolean {
  if (header === undefined) return false
  // What every client sends: skip the split and trims.
  if (header === FORM_MEDIA_TYPE) return true
  const [type, ...parameters] = header.split(';')
  if ((type ?? '').replace(OWS, '').toLowerCase() !== FORM_MEDIA_TYPE) return false
  for (const parameter of parameters) {
    const eq = parameter.indexOf('=')
    if (eq === -1) continue
    const name = parameter.slice(0, eq).replace(OWS, '').toLowerCase()
    const value = parameter.slice(eq + 1).replace(OWS, '').replace(/^"(.*)"$/, '$1').toLowerCase()
    if (name === 'charset' && value !== 'utf-8' && value !== 'utf8') return false
  }
  return true
}

function decodeComponent (text: string): string {
  // Most names and values (grant_type, client_id, generated secrets) have nothing to decode.
  if (!text.includes('%') && !text.includes('+')) return text
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    throw new GatewayError('invalid_request', { message: 'The request body is not valid application/x-www-form-urlencoded.' })
  }
}

/**
 * Parses an `application/x-www-form-urlencoded` body strictly: it must be UTF-8 and every `%` escape must be
 * well-formed (a lenient parser such as URLSearchParams would pass broken escapes through as text). `+` is a
 * space. Empty `&&` segments are skipped.
 */
export function parseFormBody (body: Buffer): FormParameters {
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    throw new GatewayError('invalid_request', { message: 'The request body is not valid UTF-8.' })
  }
  const parameters = new Map<string, string[]>()
  for (const pair of text.split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq))
    const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1))
    const values = parameters.get(name)
    if (values === undefined) parameters.set(name, [value])
    else values.push(value)
  }
  return parameters
}

/** A parameter's value; an empty value counts as omitted (RFC 6749 §3.1). */
export function formValue (parameters: FormParameters, name: string): string | undefined {
  const value = parameters.get(name)?.[0]
  return value === '' ? undefined : value
}

/** The names among `names` that were sent more than once. */
export function duplicatedParameters (parameters: FormParameters, names: readonly string[]): string[] {
  return names.filter((name) => (parameters.get(name)?.length ?? 0) > 1)
}

/**
 * Makes the form parser the only body parser of an encapsulated plugin (the token endpoint): JSON and text
 * parsers are removed, so no other body shape can reach the handler. The Content-Type itself is checked by the
 * endpoint's preParsing step, which answers 400 invalid_request as the spec asks.
 */
export function registerFormParser (app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(FORM_MEDIA_TYPE, { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT_BYTES },
    function parseTokenForm (_request, body, done) {
      try {
        done(null, parseFormBody(body as Buffer))
      } catch (error) {
        done(error as Error, undefined)
      }
    })
}
