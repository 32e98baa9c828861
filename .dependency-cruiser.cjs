/**
 * The import rules of lanegate's source (docs/plugins.md, "Where the pipeline lives"). Run by `npm test`
 * (`npm run depcruise`). Type-only imports count: `tsPreCompilationDeps` makes dependency-cruiser see them, so a
 * type-only cycle fails the same way a runtime one does.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'No import cycles, type-only ones included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'config-imports-only-errors',
      severity: 'error',
      comment: 'src/config/ turns YAML into a frozen config; the checks of plugins and services are passed in. It imports only errors/ (and packages).',
      from: { path: '^src/config/' },
      to: { path: '^(src|plugins)/', pathNot: '^src/(config|errors)/' },
    },
    {
      name: 'runtime-below-pipeline',
      severity: 'error',
      comment: 'src/runtime/ (snapshot, request context, shared resources, counters, the workers\' IPC counter) sits low: it imports config/, errors/, the plugin contract it implements (src/plugin/, which itself imports only config/ and errors/) and the interfaces of what it holds (store/store.ts, upstream/), never the pipeline, services, oauth, auth, cluster processes or the app. Start-up wiring that builds shared resources lives beside boot.ts.',
      from: { path: '^src/runtime/' },
      to: { path: '^(src|plugins)/', pathNot: '^src/(runtime|config|errors|upstream|plugin)/|^src/store/store\\.ts$' },
    },
    {
      name: 'upstream-engine-is-a-leaf',
      severity: 'error',
      comment: 'src/upstream/ (pools, balancing, health, retry; docs/upstream-engine.md) is the engine services build on: it imports only config/ types, errors/ and the metric recorders of observability/, never runtime, the pipeline, services or the app.',
      from: { path: '^src/upstream/' },
      to: { path: '^(src|plugins)/', pathNot: '^src/(upstream|config|errors)/|^src/observability/(recorders|metrics|trace-context)\\.ts$' },
    },
    {
      name: 'observability-recorders-are-low',
      severity: 'error',
      comment: 'The metrics, recorders and trace context of src/observability/ are recorded into from the oauth, upstream and service code: they import only config/ types and errors/. The admin listener, which serves a booted gateway, sits above them beside boot.ts (src/start/admin-listener.ts).',
      from: { path: '^src/observability/' },
      to: { path: '^(src|plugins)/', pathNot: '^src/(observability|config|errors)/' },
    },
    {
      name: 'cluster-below-the-app',
      severity: 'error',
      comment: 'src/cluster/ (server.workers: primary, workers, the primary\'s counters and admin listener) is given the config lanegate start loaded, counts with runtime/ counters and speaks runtime/ipc-messages.ts; it never imports services, the app or the gateway (the worker runs the usual lanegate start).',
      from: { path: '^src/cluster/' },
      to: { path: '^(src/(services|app|boot|gateway|server|cli|oauth|auth|store)|plugins/)' },
    },
    {
      name: 'plugins-use-the-public-contract',
      severity: 'error',
      comment: 'Built-in policies import only lanegate/plugin (src/plugin/index.ts) and their own files (and the shared helpers beside them under plugins/): no back doors an outside plugin lacks.',
      from: { path: '^plugins/' },
      to: { path: '^src/', pathNot: '^src/plugin/index\\.ts$' },
    },
    {
      name: 'plugin-contract-stands-alone',
      severity: 'error',
      comment: 'src/plugin/ (the contract: types, context, response phase, test harness) imports nothing of the gateway but the lowest layers, config/ and errors/: the pipeline, services and runtime implement its interfaces, not the reverse.',
      from: { path: '^src/plugin/' },
      to: { path: '^(src|plugins)/', pathNot: '^src/(plugin|config|errors)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
