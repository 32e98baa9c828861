import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { ConfigError, formatProblem } from './config/config-error.js'
import { loadGatewayConfig } from './pipeline/load-gateway-config.js'
import { hashSecret } from './oauth/secret-hash.js'
import { StartupDependencyError } from './startup-dependencies.js'
import { counted } from './errors/counted.js'

/** The version in package.json (two folders up from dist/src/cli.js and from src/cli.ts alike). */
function packageVersion (): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}

const HELP: Record<string, string> = {
  '': `lanegate — API gateway for retail platforms

Usage: lanegate <command> [options]
       lanegate --version

Commands:
  start        Serve gateway.yaml (reloads it on change or SIGHUP)
  reload       Make the running gateway reload gateway.yaml now (SIGHUP to the pid in data_dir/lanegate.pid)
  stop         Stop the running gateway gracefully (SIGTERM to the pid in data_dir/lanegate.pid)
  validate     Check a config file; lists every error with its YAML path and line
  hash-secret  Hash a client secret read from stdin, for gateway.yaml
  user-token   Mint a user token from the development user-token issuer
  routes       List every served method and path with its service, envelope and policy chain
  explain      Say what a route's policy chain would do for a client (which step refuses, or that it passes)
  loadtest     Load-test a route of a running gateway with autocannon (gets and refreshes its own token)
  config       The fleet's gateway.yaml versioned in PostgreSQL: push, pull, show, history, rollback, diff, status
  help <cmd>   Show a command's options

Run 'lanegate help <command>' for details.`,
  start: `lanegate start [--config FILE] [--port N] [--host ADDR] [--config-store URL [--data-dir DIR]]

Serves the gateway described by FILE (default ./gateway.yaml). Editing the file applies it within 2 s
(invalid files are rejected and logged; the running config stays). SIGHUP reloads at once. SIGTERM/SIGINT
finish in-flight requests (up to server.shutdown_grace_ms), then exit; a second signal exits at once.
PostgreSQL and Redis are retried for server.startup_timeout_ms at start, then it exits 1 with one line.
Relative paths in FILE are relative to FILE's folder. With server.workers > 1 (or auto), a primary process
runs that many workers on the port; send it the signals. The process to signal writes its pid to
server.data_dir/lanegate.pid (under \`npm start &\`, $! is npm's pid: npm dies of SIGHUP without passing it on).
With --config-store URL (PostgreSQL), the config is the fleet's (lanegate config push), not FILE: the process
starts from the store's head and applies each pushed version; it keeps the last applied one in DIR (default
./data) and starts from that copy when the store is unreachable; with neither it refuses to start. Relative
paths in the stored config resolve against the working directory. SIGHUP looks at the store's head at once.`,
  validate: `lanegate validate FILE

Validates FILE in two passes (structure, then references and each policy's options). Prints every error as
FILE:LINE path: message and exits 1 if there are any; prints warnings (e.g. secrets older than
issuer.secret_max_age_days) and exits 0 otherwise.`,
  'hash-secret': `lanegate hash-secret [--generate]

Reads a client secret on stdin and prints its scrypt PHC hash, to paste under service_accounts[].secrets[].hash.
  echo -n 'my-secret' | lanegate hash-secret
With --generate, makes a new random 256-bit secret and prints the secret and its hash (store the secret safely;
only the hash goes into gateway.yaml).`,
  'user-token': `lanegate user-token --sub SUBJECT --org ORG_ID [--scope "a b"] [--config FILE] [--issuer URL] [--lifetime SECONDS]

Mints a user token signed by the development user-token issuer of FILE (user_token_issuers[] with
development_key_dir), for trying routes that accept user tokens only. Prints the token.`,
}

function readStdin (): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk))
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    process.stdin.on('error', reject)
  })
}

/** Runs one CLI command; resolves to the exit code (long-running `start` resolves once listening). */
export async function main (argv: string[]): Promise<number | undefined> {
  const [command = '', ...rest] = argv
  if (command === '--version' || command === '-v' || command === 'version') {
    console.log(packageVersion())
    return 0
  }
  if (command === '' || command === '--help' || command === '-h' || command === 'help') {
    const topic = command === 'help' ? rest[0] ?? '' : ''
    if (topic === 'routes' || topic === 'explain') {
      const usage = await import('./cli/describe-commands.js')
      console.log(topic === 'routes' ? usage.ROUTES_USAGE : usage.EXPLAIN_USAGE)
      return 0
    }
    if (topic === 'reload' || topic === 'stop') {
      const usage = await import('./cli/signal-commands.js')
      console.log(topic === 'reload' ? usage.RELOAD_USAGE : usage.STOP_USAGE)
      return 0
    }
    if (topic === 'config') {
      console.log((await import('./commands/config.js')).configCommand.usage)
      return 0
    }
    if (topic === 'loadtest') {
      const { LOADTEST_USAGE } = await import('./loadtest/options.js')
      console.log(LOADTEST_USAGE)
      return 0
    }
    console.log(HELP[topic] ?? HELP[''])
    return 0
  }
  if ((rest.includes('--help') || rest.includes('-h')) && (command === 'routes' || command === 'explain' || command === 'reload' || command === 'stop' || command === 'config')) return main(['help', command])
  if ((rest.includes('--help') || rest.includes('-h')) && command !== 'loadtest') {
    console.log(HELP[command] ?? HELP[''])
    return 0
  }
  switch (command) {
    case 'start': return startCommand(rest)
    case 'reload':
    case 'stop': return (await import('./cli/signal-commands.js')).signalCommand(command, rest)
    case 'validate': return validateCommand(rest)
    case 'hash-secret': return hashSecretCommand(rest)
    case 'user-token': return userTokenCommand(rest)
    case 'routes': return (await import('./cli/describe-commands.js')).routesCommand(rest)
    case 'explain': return (await import('./cli/describe-commands.js')).explainCommand(rest)
    case 'loadtest': return (await import('./loadtest/cli.js')).loadtestCommand(rest)
    case 'config': return (await import('./commands/config.js')).configCommand.run(rest)
    default:
      console.error(`unknown command "${command}"\n\n${HELP['']}`)
      return 1
  }
}

/** `lanegate start`: serves the config (or, with server.workers > 1, becomes the primary of worker processes). */
async function startCommand (rest: string[]): Promise<number | undefined> {
  const { values } = parseArgs({ args: rest, options: { config: { type: 'string', default: 'gateway.yaml' }, port: { type: 'string' }, host: { type: 'string' }, 'config-store': { type: 'string' }, 'data-dir': { type: 'string', default: 'data' } } })
  const { loadStartConfig, loadStoreStart, startServer } = await import('./server.js')
  const options: import('./server.js').StartOptions = { file: values.config, port: values.port === undefined ? undefined : Number(values.port), host: values.host }
  try {
    // Validated once: the config that tells whether this process is a cluster primary is the one it boots.
    const loaded = values['config-store'] === undefined
      ? await loadStartConfig(options)
      : await loadStoreStart(options, { url: values['config-store'], dataDir: values['data-dir'], baseDir: process.cwd() })
    // server.workers > 1: this process becomes the primary of worker processes that each run startServer.
    const { startCluster } = await import('./cluster/primary.js')
    if (await startCluster({ file: values.config, config: loaded.config, store: options.store })) return undefined
    await startServer(options, loaded)
  } catch (error) {
    if (error instanceof ConfigError || error instanceof StartupDependencyError) {
      console.error(error.message)
    } else {
      console.error(`cannot start: ${error instanceof Error ? error.message : String(error)}`)
    }
    // Never hang on a failed start: whatever a half-opened client still holds, the process ends.
    setTimeout(() => process.exit(1), 250).unref()
    return 1
  }
  return undefined
}

/** `lanegate validate [file]`: checks a config and prints its problems and warnings. */
async function validateCommand (rest: string[]): Promise<number | undefined> {
  const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} })
  const file = positionals[0] ?? 'gateway.yaml'
  try {
    const loaded = await loadGatewayConfig(file)
    for (const w of loaded.warnings) console.log(`warning: ${formatProblem(file, w)}`)
    console.log(`${file}: valid${loaded.warnings.length > 0 ? ` (${counted(loaded.warnings.length, 'warning')})` : ''}`)
    return 0
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    for (const p of error.problems) console.error(`error: ${formatProblem(file, p)}`)
    console.error(`${file}: ${counted(error.problems.length, 'error')}`)
    return 1
  }
}

/** `lanegate hash-secret [--generate]`: the PHC hash of a secret read from stdin (or of a new one). */
async function hashSecretCommand (rest: string[]): Promise<number | undefined> {
  const { values } = parseArgs({ args: rest, options: { generate: { type: 'boolean', default: false } } })
  if (values.generate) {
    const secret = randomBytes(32).toString('base64url')
    console.log(`secret: ${secret}`)
    console.log(`hash:   ${await hashSecret(secret)}`)
    return 0
  }
  const secret = (await readStdin()).replace(/\r?\n$/, '')
  if (secret.length === 0) {
    console.error('hash-secret: no secret on stdin (echo -n SECRET | lanegate hash-secret)')
    return 1
  }
  console.log(await hashSecret(secret))
  return 0
}

/** `lanegate user-token`: a user token signed by the development user issuer. */
async function userTokenCommand (rest: string[]): Promise<number | undefined> {
  const { values } = parseArgs({
    args: rest,
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
    console.error(HELP['user-token'])
    return 1
  }
  const { mintDevUserToken } = await import('./oauth/dev-user-token-cli.js')
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
