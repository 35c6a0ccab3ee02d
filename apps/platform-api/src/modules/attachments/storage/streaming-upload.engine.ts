import { createHash, randomUUID, type Hash } from 'node:crypto';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import type { Request } from 'express';
import type { StorageEngine } from 'multer';
import { DomainError } from '@app/service-kit';
import { ErrorCode } from '@app/contracts';
import type { AuthenticatedRequest } from '../../../core/auth/auth.decorators.js';
import { SNIFF_BYTES, sniffMimeType, type SniffedMimeType } from '../mime-sniffer.js';
import { objectKey, type AttachmentStorage } from './attachment-storage.js';

/** decisions.md "Attachments": upload limit 25 MB. */
export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

/** What the engine adds to multer's file (`req.file`) once the bytes are stored. */
export interface StoredUpload {
  attachmentId: string;
  storageKey: string;
  size: number;
  /** SHA-256 of the bytes, hex. */
  checksum: string;
  mimeType: SniffedMimeType;
}

/** `@UploadedFile()` of the upload route. */
export type UploadedAttachmentFile = Express.Multer.File & StoredUpload;

export function uploadTooLarge(): DomainError {
  return new DomainError(ErrorCode.PayloadTooLarge, `file exceeds the upload limit of ${MAX_UPLOAD_BYTES / (1024 * 1024)} MB`);
}

/**
 * Counts, hashes and keeps the first bytes of what passes through, and fails with 413 as soon as
 * more than `maxBytes` went by: the upload is refused mid-stream, never stored past the limit.
 */
export class UploadInspector extends Transform {
  bytes = 0;
  private readonly hash: Hash = createHash('sha256');
  private readonly headChunks: Buffer[] = [];
  private headBytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      callback(uploadTooLarge());
      return;
    }
    this.hash.update(chunk);
    if (this.headBytes < SNIFF_BYTES) {
      const part = chunk.subarray(0, SNIFF_BYTES - this.headBytes);
      this.headChunks.push(part);
      this.headBytes += part.length;
    }
    callback(null, chunk);
  }

  checksum(): string {
    return this.hash.digest('hex');
  }

  sniff(): SniffedMimeType {
    return sniffMimeType(Buffer.concat(this.headChunks, this.headBytes));
  }
}

/**
 * multer StorageEngine of `POST /attachments`: pipes the file stream straight into the storage driver
 * (local file or S3 multipart upload), hashing and sniffing on the way, so an upload costs a few
 * buffers of memory whatever its size. The object's key is made of the caller's tenant and a new
 * attachment id, since the form's other fields may arrive after the file. Any failure (limit, client
 * gone, storage error) leaves nothing stored: the drivers drop partial objects themselves.
 */
export class StreamingUploadEngine implements StorageEngine {
  constructor(
    private readonly storage: AttachmentStorage,
    private readonly maxBytes = MAX_UPLOAD_BYTES,
  ) {}

  _handleFile(req: Request, file: Express.Multer.File, callback: (error?: unknown, info?: Partial<UploadedAttachmentFile>) => void): void {
    this.store(req, file).then(
      (info) => callback(null, info),
      (err: unknown) => callback(err),
    );
  }

  _removeFile(_req: Request, file: Partial<UploadedAttachmentFile>, callback: (error: Error | null) => void): void {
    if (!file.storageKey) {
      callback(null);
      return;
    }
    this.storage.remove(file.storageKey).then(
      () => callback(null),
      (err: Error) => callback(err),
    );
  }

  private async store(req: Request, file: Express.Multer.File): Promise<StoredUpload> {
    // The route's guard authenticated the caller before multer read a byte.
    const tenantId = (req as Partial<AuthenticatedRequest>).auth?.tenantId;
    if (!tenantId) throw DomainError.unauthorized();
    const attachmentId = randomUUID();
    const storageKey = objectKey(tenantId, attachmentId);
    const inspector = new UploadInspector(this.maxBytes);
    // A source error (client gone, malformed part) destroys the inspector, which fails the write.
    const body = pipeline(file.stream, inspector, () => undefined);
    await this.storage.write(storageKey, body);
    return { attachmentId, storageKey, size: inspector.bytes, checksum: inspector.checksum(), mimeType: inspector.sniff() };
  }
}
