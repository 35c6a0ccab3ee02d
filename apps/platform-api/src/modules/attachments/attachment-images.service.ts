import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { RateLimiterService, type RateRule } from '../../core/rate-limit/rate-limiter.service.js';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { AttachmentFilesService, withoutBodyHeaders } from './attachment-files.service.js';
import type { CropType } from './attachments.dto.js';
import { AttachmentsRepository, type AttachmentRow } from './attachments.repository.js';
import { contentDisposition, etagMatches, type ServedFile } from './file-response.js';
import { ImageResizer } from './image-resizer.js';
import { type ImageSize, type ImageVariant, variantFor } from './image-variant.js';
import { ImageVariantsService } from './image-variants.service.js';
import { RESIZABLE_TYPES } from './mime-sniffer.js';
import { ATTACHMENT_STORAGE, type AttachmentStorage, variantKey } from './storage/attachment-storage.js';

/** decisions.md "Resizing limits": renders for callers without a session, per client address, across instances. */
export const ANONYMOUS_RENDERS_RULE: RateRule = { name: 'image-render-anonymous', points: 60, durationSeconds: 60 };

export interface ImageRequest {
  width?: number;
  height?: number;
  cropType?: CropType;
  ifNoneMatch?: string;
}

/**
 * `GET /attachments/image/{id}/{slug}`: the image resized, each variant rendered once and kept in
 * storage under `resized/<id>/<w>x<h>-<crop>`. The request is first clamped to the source's size
 * (variantFor: never upscaled; requests past the source share one variant), read from the row once
 * the route has read it from the bytes. A variant's ETag derives from the source's checksum and the
 * clamped variant, so a revalidation is answered without touching storage.
 *
 * A hit marks the variant used (for the 25-variant LRU, ImageVariantsService). A miss renders inside
 * the resizer's single flight, which first looks again (a render stored just before counts) and
 * answers before the variant is written; the write and its listing (which evicts the least recently
 * used beyond 25) follow inside the flight. Renders for callers without a session count against 60 a
 * minute per client address (429 with Retry-After); hits never do. Without width and height the
 * original is served.
 */
@Injectable()
export class AttachmentImagesService {
  private readonly logger = new Logger(AttachmentImagesService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly files: AttachmentFilesService,
    private readonly attachments: AttachmentsRepository,
    private readonly resizer: ImageResizer,
    private readonly variants: ImageVariantsService,
    private readonly rateLimiter: RateLimiterService,
    @Inject(ATTACHMENT_STORAGE) private readonly storage: AttachmentStorage,
  ) {}

  async serve(auth: AuthContext | null, id: string, request: ImageRequest, client: { ip: string }): Promise<ServedFile> {
    const { row, partition } = await this.files.findReadable(auth, id);
    if (!RESIZABLE_TYPES.has(row.mimeType)) throw DomainError.badRequest('attachment is not an image');
    const variant = request.width || request.height ? variantFor(request, await this.sourceSize(row)) : null;
    const etag = variant ? `"${row.checksum}-${variant.name}"` : `"${row.checksum}"`;
    const headers: Record<string, string> = {
      'content-type': row.mimeType,
      etag,
      'cache-control': partition.cacheControl,
      'x-content-type-options': 'nosniff',
      'content-disposition': contentDisposition('inline', row.fileName),
    };
    if (etagMatches(request.ifNoneMatch, etag)) return { status: 304, headers: withoutBodyHeaders(headers), body: null };
    this.files.recordRead(auth, row, {
      route: 'image',
      width: variant?.width ?? 0,
      height: variant?.height ?? 0,
      cropType: variant?.cropType,
    });
    if (!variant) return this.original(row, headers);

    const key = variantKey(row.id, variant.name);
    const [stored, listed] = await Promise.all([this.storage.read(key), this.variants.touch(row, variant.name)]);
    // An empty object is never a variant (a PNG or JPEG has bytes): it is a write still in progress on a
    // store whose PUTs are not atomic (s3rver, some S3-compatible servers) or a damaged object. Rendered
    // again, as a miss, rather than answered as a 200 with no image.
    if (stored && stored.length === 0) stored.body.destroy();
    if (stored && stored.length > 0) {
      // Stored but not listed (written before the list existed): listed now, so it counts.
      if (!listed) await this.variants.record(row, variant.name);
      headers['content-length'] = String(stored.length);
      return { status: 200, headers, body: stored.body };
    }
    if (!auth) await this.rateLimiter.consume([{ rule: ANONYMOUS_RENDERS_RULE, ip: client.ip }], 'too many image renders, try again later');
    const rendered = await this.resizer.once(
      key,
      () => this.render(row, key, variant),
      async (output) => {
        await this.storage.writeBuffer(key, output);
        await this.variants.record(row, variant.name);
      },
    );
    headers['content-length'] = String(rendered.length);
    return { status: 200, headers, body: rendered };
  }

  private async original(row: AttachmentRow, headers: Record<string, string>): Promise<ServedFile> {
    const stored = await this.storage.read(row.storageKey);
    if (!stored) throw this.contentMissing(row);
    headers['content-length'] = String(stored.length);
    return { status: 200, headers, body: stored.body };
  }

  /**
   * The source's size as displayed: from the row, else read from the bytes' header once and kept on
   * the row. A source too large to resize is refused here (400), before anything is looked up.
   */
  private async sourceSize(row: AttachmentRow): Promise<ImageSize> {
    let size = row.imageSize;
    if (!size) {
      size = await this.resizer.dimensions(await this.sourceInput(row));
      await this.attachments.setImageSize(this.dataSource, systemScope(row.tenantId), { id: row.id, ...size });
    }
    ImageResizer.assertResizable(size);
    return size;
  }

  private async render(row: AttachmentRow, key: string, variant: ImageVariant): Promise<Buffer> {
    const done = await this.storage.readBuffer(key);
    if (done && done.length > 0) return done; // empty: see serve()
    return this.resizer.resize(await this.sourceInput(row), { ...variant, mimeType: row.mimeType });
  }

  /** A local file's path (sharp opens it itself), else the bytes. */
  private async sourceInput(row: AttachmentRow): Promise<Buffer | string> {
    const source = this.storage.localPath(row.storageKey) ?? (await this.storage.readBuffer(row.storageKey));
    if (!source) throw this.contentMissing(row);
    return source;
  }

  private contentMissing(row: AttachmentRow): DomainError {
    this.logger.error({ attachmentId: row.id }, 'stored bytes of an attachment are missing');
    return new DomainError('content_missing', 'attachment content is missing', { status: 500 });
  }
}
