import type { IssuerConfig, ServiceAccountConfig } from '../config/types.js'
import { tokenTemplate, type SigningKey, type TokenTemplate } from './token-template.js'

/**
 * The token template of each client, kept per account object (a reload brings new ones, and a WeakMap lets the old
 * go) and built again when the signing key (a rotation, a key-directory rescan), the issuer, the audience or the
 * granted scopes differ from those it was built for: a client asking for the same scopes gets its tokens signed
 * from the same encoded header and fixed claims.
 */
export function createTokenTemplates (): (key: SigningKey, account: ServiceAccountConfig, issuer: IssuerConfig, scopes: readonly string[], scope: string) => TokenTemplate {
  const templates = new WeakMap<ServiceAccountConfig, TokenTemplate>()
  return function templateFor (key, account, issuer, scopes, scope) {
    let template = templates.get(account)
    if (template === undefined || template.key !== key || template.scope !== scope ||
      template.claims.issuer !== issuer.issuer || template.claims.audience !== issuer.audience) {
      template = tokenTemplate(key, {
        issuer: issuer.issuer,
        audience: issuer.audience,
        subject: account.client_id,
        clientId: account.client_id,
        organizationId: account.organization,
        scopes: [...scopes],
        tokenType: 'service',
      })
      templates.set(account, template)
    }
    return template
  }
}
