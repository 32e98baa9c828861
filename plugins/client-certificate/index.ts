import type { FastifyRequest } from 'fastify'
import { definePolicy, type ClientCertificate, type PolicyOptionProblem, type StepOutcome } from '../../src/plugin/index.js'
import { clientCertificateSchema, type ClientCertificateOptions } from './schema.js'

/**
 * `client-certificate`: mutual TLS from callers. The listener asks callers for a certificate signed by
 * `server.tls.client_ca_file` (the handshake completes without one); on a route with this policy, a request
 * without a verified certificate is refused 401 `client_certificate_required`, and one whose certificate matches
 * none of the lists given (subject CN, DNS/URI subject alternative names, SHA-256 fingerprints) 403
 * `client_certificate_not_allowed`, both in the route's envelope. With no list, any verified certificate passes.
 */
const clientCertificate = definePolicy({
  name: 'client-certificate',
  description: 'Requires a client certificate verified against server.tls.client_ca_file, optionally one of given subjects, names or fingerprints.',
  schema: clientCertificateSchema,
  errors: {
    client_certificate_required: { status: 401, message: 'This route requires a client certificate signed by the gateway\'s client CA.' },
    client_certificate_not_allowed: { status: 403, message: 'The client certificate is not allowed on this route.' },
  },
  check (_options, settings) {
    const problems: PolicyOptionProblem[] = []
    if (!settings.clientCertificates) problems.push({ path: '', message: 'needs server.tls.client_ca_file: callers are asked for a certificate only then' })
    return problems
  },
  summarize: (options) => summary(options),
  explain: (options) => ({ outcome: 'depends', status: 401, code: 'client_certificate_required', note: `depends on the caller's TLS certificate (${summary(options)})` }),
  create (options, context) {
    const matches = matcher(options)
    return function clientCertificateStep (request: FastifyRequest): StepOutcome {
      const certificate = context.clientCertificate(request)
      if (certificate === undefined) return context.refuse('client_certificate_required')
      if (matches !== undefined && !matches(certificate)) return context.refuse('client_certificate_not_allowed')
    }
  },
})

function summary (options: ClientCertificateOptions): string {
  const parts = [
    options.subjects && `subject ${options.subjects.join(', ')}`,
    options.sans && `name ${options.sans.join(', ')}`,
    options.fingerprints_sha256 && `${options.fingerprints_sha256.length} fingerprint(s)`,
  ].filter(Boolean)
  return parts.length === 0 ? 'any verified client certificate' : parts.join('; ')
}

/** A test of one certificate against the lists (any entry of any list), or undefined when none is given. */
function matcher (options: ClientCertificateOptions): ((certificate: ClientCertificate) => boolean) | undefined {
  if (options.subjects === undefined && options.sans === undefined && options.fingerprints_sha256 === undefined) return undefined
  const subjects = new Set(options.subjects ?? [])
  // A bare name matches a DNS or URI entry; a prefixed one (`DNS:x`, `URI:x`) only that kind.
  const sans = new Set((options.sans ?? []).flatMap((name) => /^(DNS|URI):/.test(name) ? [name] : [`DNS:${name}`, `URI:${name}`]))
  const fingerprints = new Set((options.fingerprints_sha256 ?? []).map((hex) => hex.replaceAll(':', '').toLowerCase()))
  return function matchesCertificate (certificate) {
    return subjects.has(certificate.subject) || fingerprints.has(certificate.fingerprintSha256) || certificate.subjectAltNames.some((name) => sans.has(name))
  }
}

export default clientCertificate
