// Baseline: the same actor behind plain postMessage (structured clone), no runtime.
import { parentPort } from 'node:worker_threads';
import { createActor } from 'xstate';
import { echoMachine } from './echo-machine.js';

const actor = createActor(echoMachine).start();
parentPort!.on('message', (message: { type: string; corr?: number; payload?: unknown }) => {
  if (message.type === 'tick') {
    actor.send({ type: 'tick' });
    return;
  }
  if (message.type === 'echo') parentPort!.postMessage({ corr: message.corr, payload: message.payload });
  else if (message.type === 'seen')
    parentPort!.postMessage({ corr: message.corr, payload: actor.getSnapshot().context.seen });
});
