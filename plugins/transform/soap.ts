import type { PolicyContext, Refusal, UpstreamAnswer } from '../../src/plugin/index.js'
import { protocolFailure } from './response-body.js'

/**
 * SOAP 1.1 and 1.2 over the XML mapping (xml.ts): a JSON request becomes a SOAP call (`<Envelope><Body><op:Operation
 * xmlns:op="namespace">…</op:Operation></Body></Envelope>`, POST, `SOAPAction` or the `action` media-type
 * parameter), and the answer's Body content becomes JSON; a Fault becomes `upstream_error` with its code and
 * string. The answer is read with namespace prefixes stripped (an envelope's prefix is the server's choice).
 */

export interface SoapSettings {
  readonly version: '1.1' | '1.2'
  readonly namespace: string
  readonly operation: string
  readonly action?: string
}

const ENVELOPE_NS = { '1.1': 'http://schemas.xmlsoap.org/soap/envelope/', '1.2': 'http://www.w3.org/2003/05/soap-envelope' } as const

/** The Content-Type of a SOAP call: `text/xml` with SOAP 1.1; `application/soap+xml` with the action as a parameter with 1.2. */
export function soapContentType (soap: SoapSettings): string {
  if (soap.version === '1.1') return 'text/xml; charset=utf-8'
  return soap.action === undefined ? 'application/soap+xml; charset=utf-8' : `application/soap+xml; charset=utf-8; action="${soap.action}"`
}

/** SOAP 1.1's `SOAPAction` header (quoted; `""` without an action); none with 1.2, where the action is in the Content-Type. */
export function soapActionHeader (soap: SoapSettings): string | undefined {
  return soap.version === '1.1' ? `"${soap.action ?? ''}"` : undefined
}

/** Wraps the reshaped JSON (the operation's parts) in the envelope, the operation element in its namespace. */
export function soapEnvelope (soap: SoapSettings, attributePrefix: string): (value: unknown) => unknown {
  const operation = `op:${soap.operation}`
  return function wrapInEnvelope (value) {
    const parts = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { value }
    return {
      'soap:Envelope': {
        [`${attributePrefix}xmlns:soap`]: ENVELOPE_NS[soap.version],
        'soap:Body': { [operation]: { [`${attributePrefix}xmlns:op`]: soap.namespace, ...parts } },
      },
    }
  }
}

type Element = Record<string, unknown>

function elementOf (value: unknown): Element | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Element : undefined
}

/** An element's text: the string itself, or its `#text` beside attributes. */
function textOf (value: unknown, textKey: string): string | undefined {
  if (typeof value === 'string') return value
  const text = elementOf(value)?.[textKey]
  return typeof text === 'string' ? text : undefined
}

/**
 * Takes the parsed answer (prefixes stripped) apart: the content of the Body's first element (the operation's
 * response) as the value to reshape; a Fault as `upstream_error` (the upstream's HTTP status, `fault_code`,
 * `fault_string`); anything else is a `protocol` failure — except an error status without an envelope, which stays
 * the upstream's error as it came (`undefined`).
 */
export function soapUnwrap (context: PolicyContext, attributePrefix: string, textKey: string) {
  return function unwrapEnvelope (value: unknown, answer: UpstreamAnswer): { value: unknown } | Refusal | undefined {
    const body = elementOf(elementOf(elementOf(value)?.Envelope)?.Body)
    if (body === undefined) return answer.status >= 400 ? undefined : protocolFailure(context, 'The upstream answered with a body that is not a SOAP envelope.')
    const fault = elementOf(body.Fault)
    if (fault !== undefined) return faultError(context, fault, answer.status, textKey)
    if (answer.status >= 300) return undefined
    const name = Object.keys(body).find((key) => !key.startsWith(attributePrefix) || attributePrefix === '')
    const content = name === undefined ? {} : body[name]
    // An operation element with attributes only, or empty, answers an empty object.
    const parts = elementOf(content) ?? (content === '' ? {} : { value: content })
    const out: Element = {}
    for (const [key, part] of Object.entries(parts)) if (attributePrefix === '' || !key.startsWith(attributePrefix)) out[key] = part
    return { value: out }
  }
}

function faultError (context: PolicyContext, fault: Element, status: number, textKey: string): Refusal {
  // SOAP 1.1: faultcode and faultstring; SOAP 1.2: Code/Value (a Subcode kept out) and Reason/Text.
  const code = textOf(fault.faultcode, textKey) ?? textOf(elementOf(fault.Code)?.Value, textKey) ?? ''
  const reasons = elementOf(fault.Reason)?.Text
  const text = textOf(fault.faultstring, textKey) ?? textOf(Array.isArray(reasons) ? reasons[0] : reasons, textKey) ?? ''
  const error = context.refuse('upstream_error', {
    message: `The upstream answered with a SOAP Fault: ${text || code || 'no reason given'}`,
    fields: { upstream_status: status, upstream_body: '', fault_code: code, fault_string: text },
  })
  return status >= 400 && status <= 599 ? error.withStatus(status) : error
}
