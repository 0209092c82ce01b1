/**
 * The cluster credential. Every node has one unless it was started with `--insecure-open`: the secret
 * given (`--secret-file`, `TORUS_SECRET`, config, `--secret`) or, on first start, a random one created and saved
 * `0600` in the data dir. Saved secrets are reused on the next start, so a node joined once stays joined.
 *
 * The secret is stretched once with scrypt (a sniffed handshake does not allow a cheap offline guess of a weak
 * passphrase), then split with HKDF into independent keys: one for the cluster port (handshake + frame
 * encryption), one for data-plane proofs (probe streams, ring sockets), one for node-to-node API requests, and the API bearer token every node of
 * the cluster accepts. No key is the secret itself, and none can be turned back into it.
 */
import { hkdfSync, randomBytes, scryptSync } from 'node:crypto';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../native/durable-fs.js';
import { SECRET_FILE, API_TOKEN_FILE, readSecretIn } from '../protocols/data-dir-files.js';

export const SECRET_PREFIX = 'torus-';
export const API_TOKEN_PREFIX = 'tt_';

/** Where the secret came from (shown by `/v1/node` and logged at start; the value never is). */
export type SecretSource = 'flag' | 'file' | 'env' | 'config' | 'data-dir' | 'created';

export interface ClusterKeys {
  /** Key of the cluster port: handshake proofs and per-connection frame keys (32 bytes, hex). */
  readonly peerKey: string;
  /** Key proving cluster membership on data-plane connections: probe streams, ring sockets (32 bytes, hex). */
  readonly dataKey: string;
  /** Key of node-to-node HTTP requests to the API (peer proofs, e.g. a followed log): never the API token (32 bytes, hex). */
  readonly peerHttpKey: string;
  /** The bearer token for the HTTP API, the same on every node of the cluster. */
  readonly apiToken: string;
}

export type ClusterCredential =
  | {
      readonly mode: 'secret';
      readonly source: SecretSource;
      readonly secret: string;
      readonly keys: ClusterKeys;
      readonly apiToken: string;
    }
  | { readonly mode: 'open' };

/** A fresh secret: 256 random bits, URL-safe, recognisable. */
export function generateSecret(random: (n: number) => Buffer = randomBytes): string {
  return SECRET_PREFIX + random(32).toString('base64url');
}

const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const keyCache = new Map<string, ClusterKeys>();

function hkdf(master: Buffer, info: string, bytes: number): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, bytes));
}

/** Derives the cluster's keys from its secret and name (scrypt once per process and secret, then HKDF). */
export function deriveClusterKeys(secret: string, clusterName: string): ClusterKeys {
  const cacheKey = `${clusterName}\0${secret}`;
  const cached = keyCache.get(cacheKey);
  if (cached) return cached;
  const master = scryptSync(secret, `torus/v1/cluster/${clusterName}`, 32, SCRYPT);
  const keys: ClusterKeys = {
    peerKey: hkdf(master, 'torus peer v1', 32).toString('hex'),
    dataKey: hkdf(master, 'torus data-plane v1', 32).toString('hex'),
    peerHttpKey: hkdf(master, 'torus peer http v1', 32).toString('hex'),
    apiToken: API_TOKEN_PREFIX + hkdf(master, 'torus api token v1', 24).toString('base64url'),
  };
  keyCache.set(cacheKey, keys);
  return keys;
}

/** One line saved in the data dir, or undefined when the file is absent (or empty, or one of `tolerated`). */
export interface CredentialInput {
  readonly dataDir: string;
  readonly cluster: string;
  readonly secret: string | undefined;
  readonly secretSource: SecretSource | undefined;
  readonly insecureOpen: boolean;
  /** A token set with `--api-token-file` instead of the derived one. */
  readonly apiToken: string | undefined;
}

/**
 * Resolves this node's credential: the given secret, else the saved one, else a new one (saved). The effective
 * secret and API token are written to the data dir (0600) so later starts and the local CLI find them.
 * `onEvent` reports what happened, for the start-up message.
 */
export function resolveCredential(
  input: CredentialInput,
  onEvent: (what: 'created' | 'replaced' | 'saved') => void = () => {},
): ClusterCredential {
  if (input.insecureOpen) return { mode: 'open' };
  const saved = readSecretIn(input.dataDir);
  let secret: string;
  let source: SecretSource;
  if (input.secret !== undefined) {
    secret = input.secret;
    source = input.secretSource ?? 'flag';
    if (saved !== secret) {
      writeFileAtomicSync(join(input.dataDir, SECRET_FILE), `${secret}\n`);
      onEvent(saved === undefined ? 'saved' : 'replaced');
    }
  } else if (saved !== undefined) {
    secret = saved;
    source = 'data-dir';
  } else {
    secret = generateSecret();
    source = 'created';
    writeFileAtomicSync(join(input.dataDir, SECRET_FILE), `${secret}\n`);
    onEvent('created');
  }
  const keys = deriveClusterKeys(secret, input.cluster);
  const apiToken = input.apiToken ?? keys.apiToken;
  writeFileAtomicSync(join(input.dataDir, API_TOKEN_FILE), `${apiToken}\n`);
  return { mode: 'secret', source, secret, keys, apiToken };
}
