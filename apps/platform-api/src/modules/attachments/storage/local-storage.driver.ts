import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertSafeKey, type AttachmentStorage, type ByteRange, type StoredObject } from './attachment-storage.js';

/**
 * Local-disk storage under `ATTACHMENTS_ROOT` (one node, or a shared volume). A write goes to a
 * temporary file beside its target and is renamed into place once complete: rename is atomic on one
 * file system, so a reader sees the whole object or none, and concurrent writers of one key (two
 * instances rendering the same resized image) leave one whole copy.
 */
export class LocalAttachmentStorage implements AttachmentStorage {
  readonly driver = 'local' as const;
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  async write(key: string, body: Readable): Promise<void> {
    const target = await this.prepare(key);
    const temp = tempPathFor(target);
    try {
      await pipeline(body, createWriteStream(temp, { flags: 'wx' }));
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
  }

  async writeBuffer(key: string, data: Buffer): Promise<void> {
    const target = await this.prepare(key);
    const temp = tempPathFor(target);
    try {
      await writeFile(temp, data, { flag: 'wx' });
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<StoredObject | null> {
    const handle = await open(this.pathOf(key), 'r').catch(ignoreMissing);
    if (!handle) return null;
    try {
      const { size } = await handle.stat();
      const start = range?.start ?? 0;
      const end = range ? Math.min(range.end, size - 1) : size - 1;
      if (end < start) {
        await handle.close();
        return { body: Readable.from([]), length: 0 };
      }
      // The stream owns the handle from here: it closes it at the end, on error and on destroy.
      return { body: createReadStream('', { fd: handle, start, end, autoClose: true }), length: end - start + 1 };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async readBuffer(key: string): Promise<Buffer | null> {
    const handle = await open(this.pathOf(key), 'r').catch(ignoreMissing);
    if (!handle) return null;
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  localPath(key: string): string {
    return this.pathOf(key);
  }

  async remove(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch(ignoreMissing);
  }

  async removePrefix(prefix: string): Promise<void> {
    if (!prefix.endsWith('/')) throw new Error(`a prefix ends with "/": ${prefix}`);
    await rm(this.pathOf(prefix), { recursive: true, force: true });
  }

  private pathOf(key: string): string {
    assertSafeKey(key);
    return path.join(this.root, key);
  }

  /** The key's path, its folder created (not cached: a variant folder comes and goes with its attachment). */
  private async prepare(key: string): Promise<string> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    return target;
  }
}

function tempPathFor(target: string): string {
  return `${target}.${randomBytes(6).toString('hex')}.tmp`;
}

function ignoreMissing(err: NodeJS.ErrnoException): null {
  if (err.code === 'ENOENT') return null;
  throw err;
}
