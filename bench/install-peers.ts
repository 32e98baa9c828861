import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PEERS_DIR } from './paths.js'
import { NPM_PEERS, nginxBinary } from './peers.js'

/**
 * `npm run bench:peers`: installs the peer gateways the live-proxy scenarios compare with. nginx comes from
 * Debian's package (installed only when running as root with apt-get; otherwise this says what to run), the npm
 * peers go into the git-ignored bench/peers/ with `npm install --prefix`. Nothing of theirs is committed.
 */

function run (command: string, args: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  process.stdout.write(`$ ${command} ${args.join(' ')}\n`)
  const result = spawnSync(command, args, { stdio: 'inherit', env })
  return result.status === 0
}

function installNginx (): string | undefined {
  const found = nginxBinary()
  if (found !== undefined) {
    process.stdout.write(`nginx: already installed (${found})\n`)
    return undefined
  }
  const root = process.getuid?.() === 0
  const apt = existsSync('/usr/bin/apt-get')
  if (!root || !apt) {
    return `nginx is not installed and this cannot install it (${!apt ? 'no apt-get on this machine' : 'not running as root'}): ` +
      'run `sudo apt-get install -y nginx` (the bench runs its own nginx from a generated config; the system service is not needed)'
  }
  process.stdout.write('nginx: installing the Debian package with apt-get (running as root)\n')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  if (!run('apt-get', ['update'], env) || !run('apt-get', ['install', '-y', '--no-install-recommends', 'nginx'], env)) {
    return 'apt-get could not install nginx (see its output above)'
  }
  return nginxBinary() === undefined ? 'apt-get finished but no nginx binary was found' : undefined
}

function installNpmPeers (): string | undefined {
  mkdirSync(PEERS_DIR, { recursive: true })
  // fast-gateway 5.0.1 asks for fast-proxy-lite ^1.1.3, which some registries do not serve; 1.1.2 works the same.
  writeFileSync(join(PEERS_DIR, 'package.json'), JSON.stringify({
    name: 'lanegate-bench-peers',
    private: true,
    description: 'Peer gateways for npm run bench (git-ignored; installed by npm run bench:peers)',
    overrides: { 'fast-proxy-lite': '1.1.2' },
  }, null, 2) + '\n')
  const specs = Object.entries(NPM_PEERS).map(([name, version]) => `${name}@${version}`)
  return run('npm', ['install', '--prefix', PEERS_DIR, '--no-audit', '--no-fund', '--no-package-lock', ...specs])
    ? undefined
    : `npm could not install ${specs.join(', ')} into ${PEERS_DIR} (see its output above)`
}

const problems = [installNginx(), installNpmPeers()].filter((p): p is string => p !== undefined)
if (problems.length > 0) {
  process.stderr.write(`\nbench:peers: not everything could be installed; the bench skips what is missing:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`)
  process.exitCode = 1
} else {
  process.stdout.write(`\nbench:peers: nginx, ${Object.keys(NPM_PEERS).join(', ')} ready. Run npm run bench.\n`)
}
