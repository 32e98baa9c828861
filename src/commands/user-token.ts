import { parseArgs } from 'node:util'
import type { Command } from './command.js'

const USAGE = `lanegate user-token --sub SUBJECT --org ORG_ID [--scope "a b"] [--config FILE] [--issuer URL] [--lifetime SECONDS]

Mints a user token signed by the development user-token issuer of FILE (user_token_issuers[] with
development_key_dir), for trying routes that accept user tokens only. Prints the token.`

/** `lanegate user-token`: a user token signed by the development user issuer. */
async function userTokenCommand (args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string', default: 'gateway.yaml' },
      sub: { type: 'string' },
      org: { type: 'string' },
      scope: { type: 'string', default: '' },
      issuer: { type: 'string' },
      lifetime: { type: 'string', default: '3600' },
    },
  })
  if (values.sub === undefined || values.org === undefined) {
    console.error(USAGE)
    return 1
  }
  const { mintDevUserToken } = await import('./mint-dev-user-token.js')
  console.log(await mintDevUserToken({
    file: values.config,
    subject: values.sub,
    organizationId: values.org,
    scopes: values.scope.split(/\s+/).filter((s) => s !== ''),
    issuer: values.issuer,
    lifetimeSeconds: Number(values.lifetime),
  }))
  return 0
}

export const userToken: Command = {
  name: 'user-token',
  summary: 'Mint a user token from the development user-token issuer',
  usage: USAGE,
  run: userTokenCommand,
}
