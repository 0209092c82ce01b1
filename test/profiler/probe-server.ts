/**
 * A tiny node stand-in for lab tests: an HTTP server with only the probe handler, inside one lab host.
 *   probe-server.ts NODE_ID PORT [NAME=TYPE ...]
 * Prints one JSON line: { listening, nodeId, interfaces } where interfaces come from this namespace's sysfs
 * (ip netns exec remounts /sys) with the given --iface-type style overrides.
 */
import http from 'node:http';
import { discoverInterfaces } from '../../src/native/interfaces.js';
import { createProbeHandler } from '../../src/profiler/probe-handler.js';
import type { InterfaceType } from '../../src/protocols/events.js';

const [nodeId = 'node', portText = '0', ...labels] = process.argv.slice(2);
const overrides: Record<string, InterfaceType> = Object.fromEntries(labels.map((l) => l.split('=') as [string, InterfaceType]));
const handler = createProbeHandler(() => ({ nodeId, clusterName: 'lab', incarnation: 1 }));
const server = http.createServer((req, res) => {
  if (!handler(req, res)) {
    res.writeHead(404);
    res.end();
  }
});
server.listen(Number(portText), '0.0.0.0', () => {
  void discoverInterfaces({ overrides }).then((interfaces) => {
    const addr = server.address();
    process.stdout.write(JSON.stringify({ listening: typeof addr === 'object' && addr ? addr.port : 0, nodeId, interfaces }) + '\n');
  });
});
process.on('SIGTERM', () => process.exit(0));
