#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm ci` through the prepare script, or `npm run build`).
// First of all, before the CLI's modules load (and a GC can run), one of node's tick objects is held for the life of
// the process: see dist/src/node-tuning/tick-object-shape.js (cluster workers run this file too).
import('../dist/src/node-tuning/tick-object-shape.js').then((shape) => {
  shape.holdTickObjectShape()
  return import('../dist/src/cli.js')
}).then((cli) => cli.main(process.argv.slice(2))).then((code) => {
  if (typeof code === 'number') process.exitCode = code
}, (error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
})
