/**
 * The import rules of lanegate's source: the layers of architecture-layers.cjs (docs/architecture.md), and a few
 * stricter rules for single folders. Run by `npm test`
 * (`npm run depcruise`). Type-only imports count: `tsPreCompilationDeps` makes dependency-cruiser see them, so a
 * type-only cycle fails the same way a runtime one does.
 */
const { layers, apart } = require('./architecture-layers.cjs')

/** A folder's path pattern: `.` is the src root's own files. */
function folderPath (folder) {
  return folder === '.' ? '^src/[^/]+$' : `^src/${folder}/`
}

/** Subfolders named in a layer of their own are not part of their parent's rule. */
function nestedNot (folder) {
  const nested = layers.flatMap((l) => Object.keys(l.folders)).filter((f) => f !== folder && f.startsWith(`${folder}/`))
  return nested.length === 0 ? {} : { pathNot: nested.map(folderPath).join('|') }
}

/**
 * One rule per folder of src/ (architecture-layers.cjs): it imports its own files and the folders of the layers
 * below its own, never another folder of its layer or one of a layer above.
 */
const layerRules = layers.flatMap((layer, index) => {
  const ownAndAbove = layers.slice(0, index + 1).flatMap((l) => Object.keys(l.folders))
  return Object.keys(layer.folders).filter((folder) => ownAndAbove.length > 1).map((folder) => ({
    name: `layer-${layer.name.replace(/[^a-z]+/g, '-')}-${folder === '.' ? 'root' : folder.replace('/', '-')}`,
    severity: 'error',
    comment: `src/${folder === '.' ? '' : `${folder}/`} sits in the layer "${layer.name}": it imports only the layers below (architecture-layers.cjs, docs/architecture.md).`,
    from: { path: folderPath(folder), ...nestedNot(folder) },
    to: { path: ownAndAbove.filter((f) => f !== folder).map(folderPath).join('|') },
  }))
})

/** A folder apart (the client) imports nothing of src/ but its own files. */
const apartRules = Object.keys(apart).map((folder) => ({
  name: `apart-${folder}`,
  severity: 'error',
  comment: `src/${folder}/ stands alone: ${apart[folder]}.`,
  from: { path: folderPath(folder) },
  to: { path: '^(src|plugins)/', pathNot: folderPath(folder) },
}))

module.exports = {
  forbidden: [
    ...layerRules,
    ...apartRules,
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'No import cycles, type-only ones included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'runtime-below-pipeline',
      severity: 'error',
      comment: 'src/runtime/ (snapshot, request context, shared resources) holds what it is given: besides config/, errors/ and the plugin contract it implements, it imports only the interfaces of what it holds (store/store.ts, upstream/, the limiter registry\'s interface and counters). Start-up wiring that builds shared resources lives in start/.',
      from: { path: '^src/runtime/' },
      to: { path: '^(src|plugins)/', pathNot: '^src/(runtime|config|errors|upstream|plugin)/|^src/store/store\\.ts$|^src/limits/(limiter-registry-interface|request-counter)\\.ts$' },
    },
    {
      name: 'upstream-engine-is-a-leaf',
      severity: 'error',
      comment: 'src/upstream/ (pools, balancing, health, retry; docs/upstream-engine.md) is the engine services build on: it imports only config/ types, errors/, the GatewayError of the contract (plugin/gateway-error.ts) and the metric recorders of observability/ and the one-byte copy of node-tuning/ (a leaf), never runtime, the pipeline, services or the app.',
      from: { path: '^src/upstream/' },
      to: { path: '^(src|plugins)/', pathNot: '^src/(upstream|config|errors)/|^src/plugin/gateway-error\\.ts$|^src/observability/(recorders|metrics|trace-context)\\.ts$|^src/node-tuning/one-byte-copy\\.ts$' },
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
      comment: 'src/plugin/ (lanegate/plugin: the contract a policy is written against) imports nothing of src/ or plugins/ but its own files: node built-ins and packages only. The gateway implements its views; config/ and errors/ build on its refusals and catalogue.',
      from: { path: '^src/plugin/' },
      to: { path: '^(src|plugins)/', pathNot: '^src/plugin/' },
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
