import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * The folder for local state (`.data/`): dev secrets, the outbox, attachments, embedded Postgres.
 * It sits at the repository root (the folder holding turbo.json) so that every process started from
 * any workspace shares it; in a container without the repo it is the working directory's `.data`.
 */
export function defaultDataDir(start = process.cwd()): string {
  let dir = path.resolve(start);
  for (;;) {
    if (existsSync(path.join(dir, 'turbo.json'))) return path.join(dir, '.data');
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start, '.data');
    dir = parent;
  }
}

/**
 * A random per-install secret kept in `<dataDir>/secrets/<name>`; created on first use. Only for
 * development: production configs require the secret to be set explicitly.
 */
export function devSecret(dataDir: string, name: string): string {
  const dir = path.join(dataDir, 'secrets');
  const file = path.join(dir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('hex');
  try {
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch {
    // Another process created it between our check and our write: theirs wins.
    return readFileSync(file, 'utf8').trim();
  }
}
