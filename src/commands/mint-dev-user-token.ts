import { loadGatewayConfig } from '../config/second-pass/load-gateway-config.js'
import { resolveDataPath } from '../oauth/data-path.js'
import { loadDevUserIssuer } from '../oauth/dev-user-issuer.js'

export interface DevUserTokenRequest {
  file: string
  subject: string
  organizationId: string
  scopes: string[]
  /** Which development issuer (its `issuer`); default: the first with development_key_dir. */
  issuer?: string
  lifetimeSeconds: number
}

/** `lanegate user-token`: mints a user token from a development issuer declared in the config file. */
export async function mintDevUserToken (request: DevUserTokenRequest): Promise<string> {
  const { config } = await loadGatewayConfig(request.file)
  const entry = config.user_token_issuers.find((i) => i.development_key_dir !== undefined && (request.issuer === undefined || i.issuer === request.issuer))
  if (entry === undefined || entry.development_key_dir === undefined) {
    throw new Error(`${request.file}: no user_token_issuers entry with development_key_dir${request.issuer ? ` and issuer ${request.issuer}` : ''}`)
  }
  const unknown = request.scopes.filter((s) => !Object.hasOwn(config.scopes, s))
  if (unknown.length > 0) throw new Error(`unknown ${unknown.length === 1 ? 'scope' : 'scopes'}: ${unknown.join(', ')}`)
  const issuer = await loadDevUserIssuer(resolveDataPath(config, entry.development_key_dir))
  const minted = await issuer.mintUserToken({
    issuerConfig: entry,
    sub: request.subject,
    organizationId: request.organizationId,
    scopes: request.scopes,
    lifetimeSeconds: request.lifetimeSeconds,
  })
  return minted.token
}
