// Baseline: the same echo / count behaviour over plain postMessage (structured clone), no runtime.
import { parentPort } from 'node:worker_threads';

let seen = 0;
parentPort!.on('message', (message: { type: string; corr?: number; payload?: unknown }) => {
  if (message.type === 'tick') { seen++; return; }
  if (message.type === 'echo') parentPort!.postMessage({ corr: message.corr, payload: message.payload });
  else if (message.type === 'seen') parentPort!.postMessage({ corr: message.corr, payload: seen });
});
