import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseNodeArgs, startNode } from '../../src/index.js';

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
    const dataDir = mkdtempSync(join(tmpdir(), 'torus-device-'));
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
    const { config } = parseNodeArgs([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--data-dir',
      dataDir,
      '--no-mdns',
      '--log-level',
      'error',
      '--device-gflops',
      '5000',
    ]);
    const node = await startNode(config);
    t.teardown(() => node.shutdown());
    const token = node.credential.mode === 'secret' ? node.credential.apiToken : '';
    const api = (path: string, method = 'GET') =>
      fetch(`http://127.0.0.1:${node.api.port}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
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
