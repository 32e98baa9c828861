// Compile-time check (run by `tsc` in `npm test`): the client's error codes (src/client/error-codes.ts) are exactly
// the server's catalogue (src/plugin/catalogue.ts). A code added to one and not the other fails the build with an
// error naming it. Type-only imports: nothing runs.
import type { LanegateErrorCode } from '../../src/client/error-codes.js'
import type { catalogue } from '../../src/plugin/catalogue.js'

type ServerCode = keyof typeof catalogue
type MissingFromClient = Exclude<ServerCode, LanegateErrorCode>
type UnknownToServer = Exclude<LanegateErrorCode, ServerCode>

export const clientKnowsEveryServerCode: [MissingFromClient] extends [never] ? true : { add_these_codes_to_src_client_error_codes_ts: MissingFromClient } = true
export const serverKnowsEveryClientCode: [UnknownToServer] extends [never] ? true : { remove_these_codes_from_src_client_error_codes_ts: UnknownToServer } = true
