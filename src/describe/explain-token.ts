import pino from 'pino'
import { createLocalJWKSet, type JWK } from 'jose'
import { createTokenVerifier } from '../auth/token-verifier.js'
import { buildIndexes } from '../config/indexes.js'
import type { GatewayConfig } from '../config/types.js'
import { resolveDataPath } from '../oauth/data-path.js'
import { readKeyDir } from '../oauth/key-files.js'
import type { Principal } from '../runtime/request-context.js'
import type { KeyStore } from '../runtime/shared-resources.js'
import { tokenRefusal } from './token-report.js'

/**
 * The caller a pasted bearer token gives under `config`, verified exactly as the `auth` policy would (signature,
 * issuer, audience, lifetime, the issuer's claims block, introspection): what `lanegate explain --token-file`
 * reasons about. Reads the gateway's key directory and development issuers' keys as they are, never creating them;
 * nothing is logged (the verifier's logger is silent), so the token appears nowhere.
 */
export async function principalOfToken (token: string, config: GatewayConfig): Promise<Principal> {
  const keys = publishedKeys(await existingKeys(resolveDataPath(config, config.issuer.key_dir)))
  const logger = pino({ level: 'silent' })
  const verifier = createTokenVerifier({
    keys,
    logger,
    devUserIssuer: async (dir) => {
      const found = await existingKeys(dir)
      if (found.length === 0) throw new Error(`${dir}: no development user issuer key`)
      return { jwks: () => ({ keys: found }) }
    },
  })
  return await verifier.verify(token.trim(), config, buildIndexes(config))
}

/** Why a token was refused, in words for the terminal (the challenge's description, never the token). */
export function refusalOf (error: unknown): string {
  const refused = tokenRefusal(error)
  if (refused === undefined) return error instanceof Error ? error.message : String(error)
  const { status, code, description } = refused.refusal
  return `${status} ${code}${description === null ? '' : `: ${description}`}`
}

async function existingKeys (dir: string): Promise<JWK[]> {
  try {
    return (await readKeyDir(dir)).map((key) => ({ ...key.publicJwk }))
  } catch {
    // No key directory yet: the gateway has never signed a token here, so none of its tokens can verify.
    return []
  }
}

/** A key store that only verifies (explain never signs). */
function publishedKeys (keys: JWK[]): KeyStore {
  const jwks = { keys }
  return {
    get signing (): never { throw new Error('explain does not sign tokens') },
    jwks: () => jwks,
    resolve: createLocalJWKSet(jwks),
  }
}
