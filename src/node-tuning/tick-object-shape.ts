import { executionAsyncResource } from 'node:async_hooks'

/**
 * One of node's own tick objects, held for the life of the process so that V8 keeps its hidden classes alive.
 *
 * Why: V8 holds the hidden classes of node 20's tick-object literal weakly; a full GC with no tick object alive
 * frees them, the literal's keys go megamorphic for good, and every `nextTick` runs through V8's runtime from then on
 * (+40–60 % instructions per authenticated GET; docs/performance.md, "The tricks in the code").
 *
 * Holding one tick object keeps its class, and through the classes' back pointers the whole chain of them, alive:
 * the keys stay monomorphic. It has to be the first thing a process does: bin/lanegate.js (which cluster workers run
 * too) and the bench's gateway server call this before importing anything else. A tick object taken later, once
 * the keys have gone megamorphic, has a class of its own that holds nothing useful. test/unit/tick-object-shape
 * shows both ways on a bare node; test/e2e/tick-object-shape checks a real `lanegate start` after idle GCs.
 *
 * The tick object is the one running `holdTickObjectShape`'s own `nextTick`, read with `executionAsyncResource()`: no
 * async hook: enabling a hook with `init`, even for an instant, turns V8's fast promise paths off for the life of the
 * process. The object is a few dozen bytes; its callback has run.
 */
let held: object | undefined
let scheduled = false

export function holdTickObjectShape (): void {
  if (scheduled) return
  scheduled = true
  process.nextTick(() => { held ??= executionAsyncResource() })
}
