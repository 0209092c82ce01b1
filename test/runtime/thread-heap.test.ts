/**
 * The live heap is what a thread's objects hold after a full collection: it rises with what is kept and falls when it
 * is let go, where the heap in use also counts garbage not yet collected.
 */
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { threadHeap, watchLiveHeap } from '../../src/runtime/thread-heap.js';

// A full collection on demand (the node's own, after --idle-gc-minutes without one, is idle-collection.test.ts).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** A full collection, and the turn of the event loop in which Node reports it. */
const fullGc = async (): Promise<void> => {
  gc();
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};
const MIB = 2 ** 20;

t.test('liveBytes follows what is kept across full collections, not the garbage around it', async (t) => {
  t.equal(threadHeap().liveBytes, undefined, 'unknown before the first full collection is watched');
  watchLiveHeap();
  watchLiveHeap(); // a second call does nothing
  await fullGc();
  const before = threadHeap().liveBytes;
  t.type(before, 'number', 'known after one');

  let kept: number[][] | undefined = Array.from({ length: 64 }, () => new Array<number>(64 * 1024).fill(1.5));
  // Garbage on top: the heap in use grows with it, the live heap does not.
  for (let i = 0; i < 200; i++) new Array<number>(64 * 1024).fill(i + 0.5);
  await fullGc();
  const holding = threadHeap().liveBytes!;
  t.ok(holding - before! >= 30 * MIB, `keeping ~32 MiB raised it by ${((holding - before!) / MIB).toFixed(1)} MiB`);

  // Allocated since the collection (large arrays go straight to V8's old generation): in use, not yet known live.
  const allocateSince = (): void => {
    const since = Array.from({ length: 64 }, () => new Array<number>(64 * 1024).fill(2.5));
    const now = threadHeap();
    t.equal(now.liveBytes, holding, 'unchanged until the next full collection');
    t.ok(now.usedBytes - holding >= 30 * MIB, 'while the heap in use counts what came since');
    t.equal(since.length, 64);
  };
  allocateSince();
  t.equal(kept.length, 64);
  kept = undefined;
  await fullGc();
  const after = threadHeap().liveBytes!;
  t.ok(holding - after >= 30 * MIB, `letting it go lowered it by ${((holding - after) / MIB).toFixed(1)} MiB`);
});
