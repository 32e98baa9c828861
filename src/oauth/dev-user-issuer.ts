import type { JWK } from 'jose'
import type { UserTokenIssuerConfig } from '../config/types.js'
import { ensureKeyDir } from './key-files.js'
import { selectSigningKey } from './key-store.js'
import { signAccessToken, type SignedAccessToken } from './issue-token.js'

/** The client id user tokens carry when the caller names none. */
export const DEV_USER_CLIENT_ID = 'lanegate-dev-user'
/** Lifetime of a development user token when the caller names none. */
export const DEV_USER_TOKEN_LIFETIME_SECONDS = 3600

export interface MintUserTokenOptions {
  /** The `user_token_issuers[]` entry: its `issuer` and `audience` become `iss` and `aud`. */
  issuerConfig: UserTokenIssuerConfig
  sub: string
  organizationId: string
  scopes: readonly string[]
  clientId?: string
  lifetimeSeconds?: number
}

/**
 * A development issuer of user tokens, for trying user-only routes without a real identity provider. Never
 * configure one in production: whoever can read its key directory can mint user tokens.
 */
export interface DevUserIssuer {
  readonly kid: string
  /** Public keys only (`kid`, `use:'sig'`, `alg`). */
  jwks (): { keys: JWK[] }
  /** Signs a user token (`token_type:'user'`, `typ:'at+jwt'`, EdDSA). */
  mintUserToken (options: MintUserTokenOptions): Promise<SignedAccessToken>
}

/**
 * Loads the development user issuer's EdDSA key from `dir` (an absolute path: the entry's `development_key_dir`
 * resolved against `server.data_dir`), generating it on first use.
 */
export async function loadDevUserIssuer (dir: string): Promise<DevUserIssuer> {
  const keys = (await ensureKeyDir(dir, 'EdDSA')).filter((k) => k.alg === 'EdDSA')
  if (keys.length === 0) throw new Error(`${dir}: the development user issuer needs an Ed25519 key`)
  // Development keys are not rotated under load: the newest one signs at once.
  const key = selectSigningKey(keys, Date.now(), 0)
  return {
    kid: key.kid,
    jwks: () => ({ keys: keys.map((k) => ({ ...k.publicJwk })) }),
    mintUserToken: function mintUserToken (options) {
      return signAccessToken(key, {
        issuer: options.issuerConfig.issuer,
        audience: options.issuerConfig.audience,
        subject: options.sub,
        clientId: options.clientId ?? DEV_USER_CLIENT_ID,
        organizationId: options.organizationId,
        scopes: [...new Set(options.scopes)],
        tokenType: 'user',
        lifetimeSeconds: options.lifetimeSeconds ?? DEV_USER_TOKEN_LIFETIME_SECONDS,
      })
    },
  }
}
