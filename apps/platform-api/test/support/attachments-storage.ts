import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

/** The part of s3rver's API the specs use (the package ships no types). */
interface S3rverServer {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverServer;

const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as S3rverConstructor;

export type StorageDriverName = 'local' | 's3';

const BUCKET = 'attachments-test';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/**
 * The storage a spec runs against: the local driver (the app's data dir), or a real S3-compatible
 * server (s3rver) started in process on a free port over a temp dir, with its bucket created.
 * `env` configures the app under test; `keys()` lists what is stored, so a spec can check that
 * nothing is left behind (temporary files included).
 */
export interface TestStorage {
  driver: StorageDriverName;
  env: NodeJS.ProcessEnv;
  keys(root: string): Promise<string[]>;
  /** Bytes in files under the storage's own folder (local: the root; s3: s3rver's directory, parts of open uploads included). */
  bytesOnDisk(root: string): number;
  /**
   * Makes the storage refuse removals until `allowRemovals`, by a real condition: local, the given
   * folders (relative to the root) become read-only (immutable for root, whom permissions do not
   * stop); s3, the server goes away (connections refused), keeping its objects.
   */
  refuseRemovals(root: string, folders: string[]): Promise<void>;
  allowRemovals(): Promise<void>;
  close(): Promise<void>;
}

/** Folders made read-only by refuseRemovals (local), so allowRemovals and close can undo it. */
function readOnlyFolders() {
  const held = new Set<string>();
  const asRoot = process.getuid?.() === 0;
  return {
    refuse(dirs: string[]) {
      for (const dir of dirs) {
        if (asRoot) execFileSync('chattr', ['+i', dir]);
        else chmodSync(dir, 0o555);
        held.add(dir);
      }
    },
    allow() {
      for (const dir of held) {
        if (asRoot) execFileSync('chattr', ['-i', dir]);
        else chmodSync(dir, 0o755);
      }
      held.clear();
    },
  };
}

export async function startTestStorage(driver: StorageDriverName): Promise<TestStorage> {
  if (driver === 'local') {
    const folders = readOnlyFolders();
    return {
      driver,
      env: { ATTACHMENTS_DRIVER: 'local' },
      keys: (root) => Promise.resolve(localKeys(root)),
      bytesOnDisk: (root) => bytesUnder(root),
      refuseRemovals: (root, dirs) => Promise.resolve(folders.refuse(dirs.map((d) => path.join(root, d)))),
      allowRemovals: () => Promise.resolve(folders.allow()),
      close: () => Promise.resolve(folders.allow()),
    };
  }
  const directory = mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  const options = { address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: BUCKET }] };
  let server: S3rverServer | null = new S3rver({ ...options, port: 0 });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: CREDENTIALS });
  return {
    driver,
    env: {
      ATTACHMENTS_DRIVER: 's3',
      ATTACHMENTS_S3_ENDPOINT: endpoint,
      ATTACHMENTS_S3_BUCKET: BUCKET,
      ATTACHMENTS_S3_ACCESS_KEY: CREDENTIALS.accessKeyId,
      ATTACHMENTS_S3_SECRET_KEY: CREDENTIALS.secretAccessKey,
    },
    keys: async () => {
      const out = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
      return (out.Contents ?? []).map((o) => o.Key ?? '').sort();
    },
    bytesOnDisk: () => bytesUnder(directory),
    refuseRemovals: async () => {
      await server?.close();
      server = null;
    },
    // Back on the same port, over the same directory: the objects are still there.
    allowRemovals: async () => {
      if (server) return;
      server = new S3rver({ ...options, port });
      await server.run();
    },
    close: async () => {
      client.destroy();
      await server?.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

function bytesUnder(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .reduce((n, e) => n + (statSync(path.join(e.parentPath, e.name), { throwIfNoEntry: false })?.size ?? 0), 0);
  } catch {
    return 0;
  }
}

function localKeys(root: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
  } catch {
    return [];
  }
  return entries.sort();
}
