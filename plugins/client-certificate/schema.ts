import { Type, type Static } from '../../src/plugin/index.js'

const list = (description: string, item: Record<string, unknown>) => Type.Array(Type.String(item), { minItems: 1, uniqueItems: true, description })

export const clientCertificateSchema = Type.Object({
  subjects: Type.Optional(list('Common names (CN) of the subject accepted.', { minLength: 1, description: 'A subject common name.' })),
  sans: Type.Optional(list('Subject alternative names accepted: DNS names or URIs (`pos.store-12.internal`, `spiffe://retail/till/12`), or prefixed as node spells them (`DNS:…`, `URI:…`).', { minLength: 1, description: 'A DNS name or URI.' })),
  fingerprints_sha256: Type.Optional(list('SHA-256 fingerprints of the certificates accepted (hex, colons allowed).', { pattern: '^([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$', description: 'A SHA-256 fingerprint in hex.' })),
}, {
  description: 'Requires a client certificate verified against server.tls.client_ca_file; with lists, one matching an entry of any of them. None given: any verified certificate.',
  additionalProperties: false,
})

/** Options of the `client-certificate` policy. */
export type ClientCertificateOptions = Static<typeof clientCertificateSchema>
