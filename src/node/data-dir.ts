/**
 * The data dir holds the node's identity, the cluster secret, the API token and every runner's logs: owner only
 * (0700). A dir we create gets 0700; an existing one of ours that others can enter is tightened, except
 * a shared sticky dir (such as /tmp, given by mistake), which is left alone with a warning.
 */
import { chmodSync, mkdirSync, statSync } from 'node:fs';

export function secureDataDir(dir: string, warn: (message: string, fields: Record<string, unknown>) => void): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  if ((st.mode & 0o077) === 0) return;
  const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
  if (!mine || (st.mode & 0o1000) !== 0) {
    warn('the data dir is readable by other users; use a private one (--data-dir)', {
      dataDir: dir,
      mode: (st.mode & 0o7777).toString(8),
    });
    return;
  }
  chmodSync(dir, 0o700);
}
