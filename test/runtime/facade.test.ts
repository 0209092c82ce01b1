import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { connectRuntime, exposeRuntime } from '../../src/runtime/facade.js';
import { probeModule, testRuntime, waitFor } from './helpers.js';

t.test('comlink facade: typed handles to snapshot, send, subscribe and stop', async (t) => {
  const { runtime } = testRuntime(t);
  await runtime.supervise({ name: 'probe', module: probeModule, options: { start: 10 } });
  const { port1, port2 } = new MessageChannel();
  exposeRuntime(runtime, nodeEndpoint(port1));
  const node = connectRuntime(nodeEndpoint(port2));
  t.teardown(() => {
    node.release();
    port1.close();
    port2.close();
  });

  t.same(await node.actors(), ['probe']);
  const probe = node.actor<{ count: number }>('probe');
  t.same(await probe.snapshot(), { value: 'running', count: 10 });
  const seen: number[] = [];
  const openPorts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
  const portsBefore = openPorts();
  const unsubscribe = await probe.subscribe((view) => seen.push(view.count));
  await probe.send({ type: 'inc', by: 5 });
  await waitFor(() => seen.includes(15), 5_000, 'subscribed snapshot');
  await unsubscribe();
  // comlink would otherwise hold the listener's port pair open (and the process alive) until garbage collection.
  await waitFor(() => openPorts() === portsBefore, 5_000, 'the subscription ports to close');
  t.equal(openPorts(), portsBefore, 'unsubscribing closed the ports comlink opened for the listener');
  t.equal(await probe.request({ type: 'echo', payload: 'x' }), 'x');
  await probe.stop();
  t.equal(runtime.liveWorkers(), 0, 'stop shut the runtime down');
});

t.test('a handle whose node died rejects instead of hanging', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const node = connectRuntime(nodeEndpoint(port2)); // nobody exposes on port1
  t.teardown(() => {
    port1.close();
    port2.close();
  });
  const call = node.actor('probe').snapshot();
  node.abandon('the node thread exited');
  await t.rejects(call, { code: 'TORUS_ACTOR_STOPPED', message: 'the node thread exited' });
});
