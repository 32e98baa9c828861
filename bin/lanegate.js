#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm ci` through the prepare script, or `npm run build`).
import('../dist/src/cli.js').then((cli) => cli.main(process.argv.slice(2))).then((code) => {
  if (typeof code === 'number') process.exitCode = code
}, (error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
})
