/**
 * The V8 and Node tricks of the gateway. Each stays only while a test or the bench shows it still pays: re-run
 * those on a new Node before keeping it (docs/performance.md, "The tricks in the code", has each one's figures).
 *
 * | trick | file | measured on | what shows it still pays |
 * |---|---|---|---|
 * | a tick object held for the process's life | tick-object-shape.ts | Node 20.20 | test/unit/tick-object-shape (both ways on a bare node), test/e2e/tick-object-shape (a real `lanegate start` after idle GCs) |
 * | the young generation's 8 MB floor | young-generation.ts | Node 20.20 | test/e2e/young-generation; `npm run bench -- --scenario latency-c1` |
 * | no memory reducer | memory-reducer.ts | Node 20.20 | test/e2e/memory-reducer (no reduce GC with the flags, one with node's defaults); bench latency-c1 |
 * | the node options every gateway process starts with | node-flags.ts | Node 20.20 | test/unit/node-flags, test/e2e/young-generation (workers get both) |
 * | token ids from a random pool | random-pool.ts | Node 20.20 | test/unit/oauth-compact-jws; `npm run bench -- --scenario token` |
 * | shared, flat copies of repeated claim values | claim-interning.ts | Node 20.20 | test/unit/claim-interning; `npm run bench -- --instructions` (auth-get) |
 * | one-byte copies of config strings a response or request head repeats | one-byte-copy.ts | Node 20.20 | test/unit/one-byte-copy, test/upstream/one-byte (the upstream credential); `npm run bench -- --scenario token,live-proxy --instructions` |
 *
 * Tricks that live with the code they speed up: `request.gw` as one class (runtime/request-context.ts;
 * test/app/request-context-shape), the last key beside the WeakMap (runtime/derived-once.ts), request ids
 * (logging/request-id.ts), fastify's default child-logger factory (logging/request-logger.ts), the WebAssembly
 * constant-time compare (secrets/same-secret.ts; test/unit/same-secret against `timingSafeEqual`).
 */
export { holdTickObjectShape } from './tick-object-shape.js'
export { GATEWAY_NODE_FLAGS, withGatewayNodeFlags } from './node-flags.js'
export { randomTokenId } from './random-pool.js'
export { internScopes, internString } from './claim-interning.js'
export { oneByteCopy } from './one-byte-copy.js'
