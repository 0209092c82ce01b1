/**
 * The API's certificate: the one given (`--tls-cert`/`--tls-key`, an organisation's own), else the node's own
 * self-signed one, made on first start and saved `0600` in the data dir so its fingerprint stays the same across
 * restarts (clients pin it, known_hosts style). A damaged or mismatched pair fails the start with a clear error
 * rather than serving something a client would refuse.
 */
import { readFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { TorusError } from '../../protocols/errors.js';
import { writeFileAtomicSync } from '../../native/durable-fs.js';
import { certFingerprint, keyMatchesCert, makeSelfSignedCert } from './self-signed.js';

export const TLS_CERT_FILE = 'api-tls.crt';
export const TLS_KEY_FILE = 'api-tls.key';

export interface NodeCert {
  readonly cert: string;
  readonly key: string;
  /** SHA-256 of the certificate, `AA:BB:…`. */
  readonly fingerprint: string;
  readonly source: 'given' | 'data-dir' | 'created';
}

function read(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new TorusError('TORUS_CONFIG_INVALID', `cannot read the TLS ${what} ${path}: ${(error as Error).message}`, {
      where: 'flag',
      path,
    });
  }
}

function checked(cert: string, key: string, where: string, source: NodeCert['source']): NodeCert {
  let fingerprint: string;
  try {
    fingerprint = certFingerprint(cert);
  } catch (error) {
    throw new TorusError('TORUS_CONFIG_INVALID', `${where}: not a PEM certificate (${(error as Error).message})`, {
      where: 'flag',
      path: where,
    });
  }
  if (!keyMatchesCert(cert, key))
    throw new TorusError('TORUS_CONFIG_INVALID', `${where}: the key is not the certificate's`, {
      where: 'flag',
      path: where,
    });
  return { cert, key, fingerprint, source };
}

/** Names the certificate carries: this machine's names and addresses at creation (informational: clients pin). */
function altNames(): string[] {
  const names = new Set(['localhost', '127.0.0.1', '::1', hostname()]);
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) names.add(a.address.replace(/%.*$/, ''));
  return [...names].filter((n) => /^[A-Za-z0-9.:-]{1,253}$/.test(n));
}

export function loadNodeCert(o: {
  dataDir: string;
  nodeId: string;
  certFile?: string | undefined;
  keyFile?: string | undefined;
}): NodeCert {
  if (o.certFile !== undefined && o.keyFile !== undefined)
    return checked(read(o.certFile, 'certificate'), read(o.keyFile, 'key'), o.certFile, 'given');
  const certPath = join(o.dataDir, TLS_CERT_FILE);
  const keyPath = join(o.dataDir, TLS_KEY_FILE);
  let saved: { cert: string; key: string } | undefined;
  try {
    saved = { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (saved) return checked(saved.cert, saved.key, certPath, 'data-dir');
  const made = makeSelfSignedCert(`torus node ${o.nodeId}`, altNames());
  // The key first: a crash between the two writes leaves no certificate without its key.
  writeFileAtomicSync(keyPath, made.key, { mode: 0o600 });
  writeFileAtomicSync(certPath, made.cert, { mode: 0o600 });
  return checked(made.cert, made.key, certPath, 'created');
}
