import type { Command } from './command.js'
import { signalGateway } from './signal-gateway.js'

const USAGE = `lanegate stop [--config FILE | --data-dir DIR]

Sends SIGTERM to the gateway serving FILE (default ./gateway.yaml), as named in server.data_dir/lanegate.pid: it
finishes in-flight requests (up to server.shutdown_grace_ms), then exits. LANEGATE_PID_FILE, when set, names the
pid file instead (\`npm run cluster\` gives each instance its own). A gateway following a config store reads no
FILE: give its --data-dir (the stored config's server.data_dir, from its working directory).`

export const stop: Command = {
  name: 'stop',
  summary: 'Stop the running gateway gracefully (SIGTERM to the pid in data_dir/lanegate.pid)',
  usage: USAGE,
  run: async (args) => signalGateway('stop', args),
}
