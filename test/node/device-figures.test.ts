import t from 'tap';
import { setTimeout as delay } from 'node:timers/promises';
import { startLoopbackNode } from '../fixtures/loopback-node.js';

interface TopologyNode {
  id: string;
  device?: {
    memoryBandwidthGBps?: number;
    gflops?: number;
    gflopsSource?: string;
    memoryBandwidthSource?: string;
    measuredAt?: number;
  };
}

t.test(
  'a node measures its device after start, publishes it with the declared figure, and re-measures on request',
  async (t) => {
    const { node, url, auth } = await startLoopbackNode(t, ['--device-gflops', '5000']);
    const api = (path: string, method = 'GET') => fetch(`${url}${path}`, { method, headers: auth });
    // Poll the replicated state until the profile carries the measurement (bounded; no timing is judged).
    let self: TopologyNode | undefined;
    for (let i = 0; i < 300 && self?.device?.memoryBandwidthGBps === undefined; i++) {
      const topology = (await (await api('/v1/topology')).json()) as { nodes: TopologyNode[] };
      self = topology.nodes.find((n) => n.device !== undefined);
      if (self?.device?.memoryBandwidthGBps === undefined) await delay(100);
    }
    t.ok((self?.device?.memoryBandwidthGBps ?? 0) > 0, 'memory bandwidth measured');
    t.equal(self?.device?.memoryBandwidthSource, 'measured');
    t.equal(self?.device?.gflops, 5000, 'the declared figure replaces the measured one');
    t.equal(self?.device?.gflopsSource, 'declared');
    const first = self?.device?.measuredAt as number;
    const again = await api('/v1/device/measure', 'POST');
    t.equal(again.status, 200);
    const body = (await again.json()) as { device: TopologyNode['device'] };
    t.ok((body.device?.measuredAt as number) >= first);
    t.equal(body.device?.gflops, 5000);
    await node.shutdown();
    t.equal(await node.closed, 0);
  },
);
