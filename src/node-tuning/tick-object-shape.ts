import { executionAsyncResource } from 'node:async_hooks'

/**
 * One of node's own tick objects, held for the life of the process so that V8 keeps its hidden classes alive.
 *
 * Why: node 20's `process.nextTick` builds each tick object as a literal whose first keys are symbols
 * (`{ [async_id_symbol]: id, [trigger_async_id_symbol]: trigger, callback, args }`). V8 records, per key of that
 * literal, the hidden class it saw, and holds that class weakly. A request runs about 30 `nextTick`s (streams call it
 * from `onwrite`, `endReadable`, `resume`…), and none of their objects outlives its tick. So a full GC that finds no
 * tick object alive frees those classes: while the CLI's modules load, or on an idle turn after traffic (V8's memory
 * reducer). The next tick object gets new classes, V8 takes the keys as megamorphic for good, and every `nextTick`
 * from then on defines its keys through V8's runtime: +40–60 % instructions per authenticated GET under callgrind.
 * Without this, 4 of 5 fresh `lanegate start` processes were there after boot, and the bench's gateway now and then
 * (docs/performance.md, "Issue 24, the seventh session").
 *
 * Holding one tick object keeps its class, and through the classes' back pointers the whole chain of them, alive:
 * the keys stay monomorphic. It has to be the first thing a process does: bin/lanegate.js (which cluster workers run
 * too) and the bench's gateway server call this before importing anything else. A tick object taken later, once
 * the keys have gone megamorphic, has a class of its own that holds nothing useful. test/unit/tick-object-shape
 * shows both ways on a bare node; test/e2e/tick-object-shape checks a real `lanegate start` after idle GCs.
 *
 * The tick object is the one running `holdTickObjectShape`'s own `nextTick`, read with `executionAsyncResource()`: no
 * async hook. The first version took it with a hook enabled around one `nextTick`; enabling a hook with `init`, even
 * for an instant, installs V8's promise hooks, and V8 does not take its fast promise paths again for the life of the
 * process (`new Promise(…).then(…)` 20–35 % slower after it, docs/performance.md). The object is a few dozen bytes;
 * its callback has run.
 */
let held: object | undefined
let scheduled = false

export function holdTickObjectShape (): void {
  if (scheduled) return
  scheduled = true
  process.nextTick(() => { held ??= executionAsyncResource() })
}
