/** How one issuer's opaque tokens are checked (`user_token_issuers[].introspection`), per config snapshot. */
export interface IntrospectionRules {
  readonly url: string
  /** `Basic …` of the gateway's client at the provider, built once (RFC 6749 §2.3.1 form-encodes both parts). */
  readonly authorization: string
  readonly cacheMs: number
  readonly timeoutMs: number
}

export function introspectionRules (config: { url: string, client_id: string, client_secret: string, cache_seconds: number, timeout_ms: number }): IntrospectionRules {
  const credentials = `${encodeURIComponent(config.client_id)}:${encodeURIComponent(config.client_secret)}`
  return {
    url: config.url,
    authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
    cacheMs: config.cache_seconds * 1000,
    timeoutMs: config.timeout_ms,
  }
}
