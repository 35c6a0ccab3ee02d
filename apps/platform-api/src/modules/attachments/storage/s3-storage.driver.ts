import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { AttachmentsStorageConfig } from '../../../config/platform-config.js';
import { assertSafeKey, type AttachmentStorage, type ByteRange, type StoredObject } from './attachment-storage.js';

type S3Settings = Extract<AttachmentsStorageConfig, { driver: 's3' }>;

/**
 * The smallest part S3 accepts (but the last). A stream is cut into parts of this size, so an upload
 * holds at most one part in memory however large the file.
 */
export const S3_PART_BYTES = 5 * 1024 * 1024;

/**
 * An S3-compatible bucket (AWS, MinIO, s3rver...), for deployments with several API instances.
 * Objects appear atomically by S3's own semantics: a PUT or a completed multipart upload.
 */
export class S3AttachmentStorage implements AttachmentStorage {
  readonly driver = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint ?? undefined,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.credentials ?? undefined,
      // Checksums only where S3 requires them: S3-compatible servers reject the SDK's default
      // trailing-checksum (aws-chunked) encoding.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** A single PUT when the stream ends within one part, else a multipart upload, aborted on any error. */
  async write(key: string, body: Readable): Promise<void> {
    assertSafeKey(key);
    let uploadId: string | null = null;
    const parts: { ETag: string | undefined; PartNumber: number }[] = [];
    let chunks: Buffer[] = [];
    let buffered = 0;
    const flush = async () => {
      uploadId ??= await this.createMultipart(key);
      const PartNumber = parts.length + 1;
      const data = Buffer.concat(chunks, buffered);
      chunks = [];
      buffered = 0;
      const out = await this.client.send(
        new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber, Body: data, ContentLength: data.length }),
      );
      parts.push({ ETag: out.ETag, PartNumber });
    };
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        buffered += chunk.length;
        if (buffered >= S3_PART_BYTES) await flush();
      }
      if (uploadId === null) {
        await this.writeBuffer(key, Buffer.concat(chunks, buffered));
        return;
      }
      if (buffered > 0) await flush();
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
      );
    } catch (err) {
      body.destroy();
      if (uploadId !== null) await this.abortMultipart(key, uploadId);
      throw err;
    }
  }

  async writeBuffer(key: string, data: Buffer): Promise<void> {
    assertSafeKey(key);
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: data, ContentLength: data.length }));
  }

  async read(key: string, range?: ByteRange): Promise<StoredObject | null> {
    assertSafeKey(key);
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return { body: out.Body as Readable, length: out.ContentLength ?? 0 };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async readBuffer(key: string): Promise<Buffer | null> {
    const object = await this.read(key);
    if (!object) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of object.body as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  localPath(): null {
    return null;
  }

  async remove(key: string): Promise<void> {
    assertSafeKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Lists the prefix page by page (1000 keys each) and deletes each page with one request. */
  async removePrefix(prefix: string): Promise<void> {
    assertSafeKey(prefix);
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length) {
        const out = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
        // A batch delete answers 200 even when some keys were not deleted: those are listed in Errors.
        const failed = out.Errors ?? [];
        if (failed.length) throw new Error(`could not delete ${failed.length} object(s) under ${prefix}: ${failed[0].Code ?? 'error'}`);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private async createMultipart(key: string): Promise<string> {
    const out = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }));
    if (!out.UploadId) throw new Error('S3 returned no UploadId');
    return out.UploadId;
  }

  private async abortMultipart(key: string, uploadId: string): Promise<void> {
    await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
  }

  destroy(): void {
    this.client.destroy();
  }
}

function isMissing(err: unknown): boolean {
  // Not a bare 404: NoSuchBucket is a misconfiguration, which must fail loudly.
  const name = (err as { name?: string } | null)?.name;
  return name === 'NoSuchKey' || name === 'NotFound';
}
