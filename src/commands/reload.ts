import type { Command } from './command.js'
import { signalGateway } from './signal-gateway.js'

const USAGE = `lanegate reload [--config FILE | --data-dir DIR]

Sends SIGHUP to the gateway serving FILE (default ./gateway.yaml): the pid comes from server.data_dir/lanegate.pid,
which \`lanegate start\` writes (the primary's, with server.workers > 1), or LANEGATE_PID_FILE when set (as
\`npm run cluster\` sets it for each instance). A gateway following a config store reads no FILE: give its
--data-dir (the stored config's server.data_dir, from its working directory); SIGHUP makes it check the store's head.
The gateway logs what the reload did.`

export const reload: Command = {
  name: 'reload',
  summary: 'Make the running gateway reload gateway.yaml now (SIGHUP to the pid in data_dir/lanegate.pid)',
  usage: USAGE,
  run: async (args) => signalGateway('reload', args),
}
