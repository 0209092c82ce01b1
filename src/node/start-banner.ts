/**
 * What a node prints when it is up: its id and address, the dashboard URL (with the API token, Jupyter style:
 * opening it logs the browser in) and the command another machine runs to join (Docker Swarm style). Also the
 * loud warnings for credentials on the command line and for --insecure-open.
 */
import { networkInterfaces } from 'node:os';
import type { NodeConfig } from './config.js';
import type { ClusterCredential } from './credentials.js';

/** The first non-internal IPv4 address of this machine (what another machine most likely reaches), or undefined. */
export function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** The command that makes another machine join this node's cluster (secret in the environment, not in `ps`). */
/** `secret` null: an --insecure-open cluster. */
export function joinCommand(secret: string | null, address: string, port: number, cluster: string): string {
  const clusterFlag = cluster === 'torus' ? '' : ` --cluster ${cluster}`;
  if (secret === null) return `node dist/main.js --insecure-open --peers ${address}:${port}${clusterFlag}`;
  return `TORUS_SECRET=${secret} node dist/main.js --peers ${address}:${port}${clusterFlag}`;
}

/** How the CLI on another machine reaches this API: the https URL and the certificate fingerprint it pins. */
export function remoteApiLine(address: string, port: number, fingerprint: string): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return `TORUS_API=https://${host}:${port} TORUS_API_FINGERPRINT=${fingerprint}`;
}

export function startBanner(o: {
  nodeId: string;
  incarnation: number;
  host: string;
  port: number;
  config: NodeConfig;
  credential: ClusterCredential;
  fingerprint?: string | undefined;
}): string {
  const local = ['0.0.0.0', '::'].includes(o.host) ? '127.0.0.1' : o.host;
  const reachable = ['0.0.0.0', '::'].includes(o.host) ? (lanAddress() ?? local) : o.host;
  const lines = [`torus node ${o.nodeId} (incarnation ${o.incarnation}) listening on ${o.host}:${o.port}`];
  if (o.credential.mode === 'open') {
    lines.push(`  dashboard: http://${local}:${o.port}/`);
    lines.push(
      '  WARNING: --insecure-open: no credential. Anyone who reaches this node can run commands on every node of the cluster.',
    );
  } else {
    lines.push(`  dashboard: http://${local}:${o.port}/?token=${o.credential.apiToken}`);
    if (o.fingerprint && reachable !== local) {
      // From another machine the API answers credentials over TLS only; the fragment (never sent) names the
      // certificate the browser's warning page should show.
      const host = reachable.includes(':') ? `[${reachable}]` : reachable;
      lines.push(
        `  dashboard from another machine: https://${host}:${o.port}/?token=${o.credential.apiToken}#sha256=${o.fingerprint}`,
      );
    }
  }
  lines.push(
    `  join from another machine: ${joinCommand(o.credential.mode === 'secret' ? o.credential.secret : null, reachable, o.port, o.config.cluster)}`,
  );
  if (o.fingerprint)
    lines.push(
      `  API certificate sha256 ${o.fingerprint}; the CLI elsewhere: ${remoteApiLine(reachable, o.port, o.fingerprint)} node dist/main.js status`,
    );
  return `${lines.join('\n')}\n`;
}

/** Warnings about how the credential was given, printed before the node starts. */
export function credentialWarnings(config: NodeConfig): string[] {
  const out: string[] = [];
  if (config.secretSource === 'flag')
    out.push(
      'torus: warning: --secret is visible to every user of this machine (ps); prefer --secret-file or TORUS_SECRET',
    );
  if (config.insecureOpen)
    out.push(
      'torus: WARNING: --insecure-open: the API and the cluster port accept anyone; exec workloads are as open as the flags below allow',
    );
  return out;
}
