/**
 * lanegate's layers, top to bottom: the one source of docs/architecture.md's diagram (`npm run architecture`
 * writes it; test/unit/architecture-doc.test.ts fails when the two differ) and of the layer rules of
 * .dependency-cruiser.cjs. A folder of src/ (or a subfolder named on its own, such as config/second-pass) may import its own files and the folders of the layers below its own,
 * never a folder of its own layer or above. Every folder of src/ is in exactly one layer (a test checks it).
 */
module.exports = {
  layers: [
    { name: 'entry', folders: { '.': 'reads argv and runs one command; nothing else sits at the src root' } },
    { name: 'commands', folders: { commands: 'one file per `lanegate` subcommand behind one table (index.ts)' } },
    { name: 'tools', folders: { loadtest: '`lanegate loadtest`: autocannon with a token of its own' } },
    { name: 'start-up', folders: { start: 'process start-up and shutdown in the order they run: server, boot, app, shared resources, admin listener' } },
    { name: 'workers', folders: { cluster: 'server.workers: the primary, its workers and what they share' } },
    {
      name: 'operator',
      folders: {
        console: 'the operator console: views of a running gateway (it declares the sources it reads)',
        'config-store': "the fleet's versioned gateway.yaml in PostgreSQL: push, history, follow, the offline copy",
      },
    },
    {
      name: 'config in motion',
      folders: {
        reload: 'the live config: the swapped snapshot and hot reload',
        describe: 'routes, explain and /openapi.json, from the config alone',
      },
    },
    {
      name: 'config checks',
      folders: { 'config/second-pass': "the second pass of gateway.yaml's validation: what needs the catalog of policies and services (docs/configuration.md lists every check)" },
    },
    { name: 'pipeline', folders: { pipeline: 'the catalog of policies and services, plugin loading, building and running chains' } },
    { name: 'services', folders: { services: 'payments, content, reports, timeseries, fan-out, host files, live and proxy relays: one fastify plugin each' } },
    {
      name: 'protocols',
      folders: {
        oauth: 'the token endpoint as named steps, client authentication, signing keys, metadata',
        auth: 'bearer and API-key verification: own and outside issuers',
        websocket: 'open WebSockets and event streams, their rights rechecked on reload and expiry',
      },
    },
    { name: 'request state', folders: { runtime: 'the config snapshot and request context every request reads, the shared resources' } },
    {
      name: 'engines',
      folders: {
        upstream: 'the one upstream engine: pools, balancing, health, retries, relay, TLS',
        limits: 'rate-limit counters, synced windows, connection slots, and their IPC',
        logging: 'the logger, its asynchronous destination, request logging and request ids',
      },
    },
    {
      name: 'foundations',
      folders: {
        store: 'durable state behind one interface: SQLite, PostgreSQL',
        observability: 'metrics, readiness, trace context',
        tls: 'listener TLS, rotation, HTTP/2',
        secrets: 'secret hashing (scrypt PHC) and constant-time comparison',
        ipc: 'how lanegate processes reach each other: worker messages, the worker marker, the pid file',
        'node-tuning': 'V8 and Node tricks, each with the version it was measured on and the test that shows it pays',
      },
    },
    { name: 'config', folders: { config: 'gateway.yaml in, a validated and frozen config out' } },
    { name: 'errors', folders: { errors: 'envelopes (the spec\'s body shapes) and the one error handler' } },
    { name: 'contract', folders: { plugin: 'lanegate/plugin: the policy contract (refusals and the error catalogue, views, response and body phases, the one Ajv); imports nothing of src' } },
  ],
  /** Folders outside the layers: each stands alone or has a rule of its own in .dependency-cruiser.cjs. */
  apart: {
    client: 'lanegate/client, the TypeScript client: imports nothing of the gateway',
  },
}
