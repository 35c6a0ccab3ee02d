import type { Readable } from 'node:stream';

/** Injection token of the configured driver (`ATTACHMENTS_DRIVER`). */
export const ATTACHMENT_STORAGE = Symbol('ATTACHMENT_STORAGE');

/** A byte range, both ends inclusive (HTTP's `bytes=start-end`). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredObject {
  body: Readable;
  /** Bytes in `body` (the range's length for a range read). */
  length: number;
}

/**
 * Where attachment bytes live. Keys are built by the module (`objects/<tenant>/<id>`,
 * `resized/<id>/<w>x<h>-<crop>`), never taken from a request. Every write is atomic: an object is
 * either absent or complete, so readers (and other instances) never see a partial file, and two
 * writers of the same key leave one whole copy.
 */
export interface AttachmentStorage {
  readonly driver: 'local' | 's3';
  /**
   * Streams `body` into `key` without holding it whole in memory. On any error (including one the
   * source stream raises) nothing is left under the key and the promise rejects with that error.
   */
  write(key: string, body: Readable): Promise<void>;
  writeBuffer(key: string, data: Buffer): Promise<void>;
  /** The object (or a range of it), or null when there is no such key. */
  read(key: string, range?: ByteRange): Promise<StoredObject | null>;
  readBuffer(key: string): Promise<Buffer | null>;
  /**
   * A path on this machine's file system holding the object, for readers that can open a file
   * themselves (sharp decodes it without the bytes passing through the JS heap); null when the
   * driver keeps objects elsewhere (S3). The path may not exist: the reader reports that.
   */
  localPath(key: string): string | null;
  /** Idempotent: a missing key is not an error. */
  remove(key: string): Promise<void>;
  /** Every object whose key starts with `prefix` (which ends with `/`). */
  removePrefix(prefix: string): Promise<void>;
}

/** Keys are ours, but a driver still refuses anything that could leave its root. */
const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*\/?$/;

export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`unsafe storage key: ${key}`);
  }
}

/** Every original file of a tenant lives under this prefix. */
export function objectsPrefix(tenantId: string): string {
  return `objects/${tenantId}/`;
}

/** The original file of an attachment. */
export function objectKey(tenantId: string, attachmentId: string): string {
  return `${objectsPrefix(tenantId)}${attachmentId}`;
}

/** Where the variant prefixes of all attachments live. */
export const VARIANTS_ROOT = 'resized/';

/** Every resized variant of an attachment lives under this prefix. */
export function variantPrefix(attachmentId: string): string {
  return `${VARIANTS_ROOT}${attachmentId}/`;
}

/** One resized variant: `resized/<id>/<variant>`, the variant named by `variantName` (`<w>x<h>-<crop>`). */
export function variantKey(attachmentId: string, variant: string): string {
  return `${variantPrefix(attachmentId)}${variant}`;
}
