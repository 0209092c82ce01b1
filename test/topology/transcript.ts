// Transcript helpers: a readable one-block rendering of a state, and golden-file comparison
// (set UPDATE_GOLDEN=1 to rewrite the files under test/fixtures/topology/).
import { readFileSync, writeFileSync } from 'node:fs';
import type { ClusterState } from '../../src/core/topology/state.js';

export function describeState(s: ClusterState): string {
  const lines = [`lastIndex=${s.lastIndex} lastTerm=${s.lastTerm}`];
  for (const n of Object.values(s.nodes)) {
    const p = n.profile ? ` ram=${n.profile.memory.ramAvailable}/${n.profile.memory.ramTotal} ifs=${n.profile.interfaces.map((i) => `${i.name}:${i.ips.join('+')}:${i.type}`).join(',')}` : ' (no profile)';
    lines.push(`  node ${n.id} inc=${n.incarnation}${p}`);
  }
  for (const l of s.links) {
    const m = l.bandwidthBps !== undefined ? ` ${l.bandwidthBps}bps ${l.rttMs}ms` : '';
    lines.push(`  link ${l.source}->${l.sink} @${l.ip} ${l.type}${m}`);
  }
  for (const [id, i] of Object.entries(s.instances)) {
    const runners = Object.entries(i.runners).map(([n, r]) => `${n}:${r.status}`).join(',');
    lines.push(`  instance ${id} ${i.status} gen=${i.generation} nodes=${i.plan.nodes.join(',')} runners=[${runners}]${i.reason ? ` reason="${i.reason}"` : ''}`);
  }
  for (const task of Object.values(s.tasks)) lines.push(`  task ${task.id} ${task.instanceId} ${task.status}`);
  return lines.join('\n');
}

export function golden(name: string, actual: string): string {
  const url = new URL(`../fixtures/topology/${name}`, import.meta.url);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(url, actual);
  return readFileSync(url, 'utf8');
}
