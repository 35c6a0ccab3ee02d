import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { AttachmentFilesService, withoutBodyHeaders } from './attachment-files.service.js';
import type { CropType } from './attachments.dto.js';
import type { AttachmentRow } from './attachments.repository.js';
import { contentDisposition, etagMatches, type ServedFile } from './file-response.js';
import { ImageResizer } from './image-resizer.js';
import { RESIZABLE_TYPES } from './mime-sniffer.js';
import { ATTACHMENT_STORAGE, type AttachmentStorage, variantKey } from './storage/attachment-storage.js';

export interface ImageRequest {
  width?: number;
  height?: number;
  cropType?: CropType;
  ifNoneMatch?: string;
}

/**
 * `GET /attachments/image/{id}/{slug}`: the image resized, each variant rendered once and kept in
 * storage under `resized/<id>/<w>x<h>-<crop>`. A variant's ETag derives from the source's checksum
 * and the parameters, so a revalidation is answered without touching storage. A miss renders inside
 * the resizer's single flight, which first looks again (a render stored just before counts) and
 * answers before the variant is written (the write follows, still inside the flight); across
 * instances the storage's atomic writes make a rare second render of the same bytes harmless.
 * Without width and height the original is served.
 */
@Injectable()
export class AttachmentImagesService {
  private readonly logger = new Logger(AttachmentImagesService.name);

  constructor(
    private readonly files: AttachmentFilesService,
    private readonly resizer: ImageResizer,
    @Inject(ATTACHMENT_STORAGE) private readonly storage: AttachmentStorage,
  ) {}

  async serve(auth: AuthContext | null, id: string, request: ImageRequest): Promise<ServedFile> {
    const { row, partition } = await this.files.findReadable(auth, id);
    if (!RESIZABLE_TYPES.has(row.mimeType)) throw DomainError.badRequest('attachment is not an image');
    const width = request.width ?? 0;
    const height = request.height ?? 0;
    const cropType = request.cropType ?? 'cover';
    const original = width === 0 && height === 0;
    const etag = original ? `"${row.checksum}"` : `"${row.checksum}-${width}x${height}-${cropType}"`;
    const headers: Record<string, string> = {
      'content-type': row.mimeType,
      etag,
      'cache-control': partition.cacheControl,
      'x-content-type-options': 'nosniff',
      'content-disposition': contentDisposition('inline', row.fileName),
    };
    if (etagMatches(request.ifNoneMatch, etag)) return { status: 304, headers: withoutBodyHeaders(headers), body: null };

    const key = original ? row.storageKey : variantKey(row.id, width, height, cropType);
    const stored = await this.storage.read(key);
    this.files.recordRead(auth, row, { route: 'image', width, height, cropType });
    if (stored) {
      headers['content-length'] = String(stored.length);
      return { status: 200, headers, body: stored.body };
    }
    if (original) throw new DomainError('content_missing', 'attachment content is missing', { status: 500 });
    const rendered = await this.resizer.once(
      key,
      () => this.render(row, key, { width, height, cropType }),
      (output) => this.storage.writeBuffer(key, output),
    );
    headers['content-length'] = String(rendered.length);
    return { status: 200, headers, body: rendered };
  }

  private async render(row: AttachmentRow, key: string, size: { width: number; height: number; cropType: CropType }): Promise<Buffer> {
    const done = await this.storage.readBuffer(key);
    if (done) return done;
    const source = this.storage.localPath(row.storageKey) ?? (await this.storage.readBuffer(row.storageKey));
    if (!source) {
      this.logger.error({ attachmentId: row.id }, 'stored bytes of an attachment are missing');
      throw new DomainError('content_missing', 'attachment content is missing', { status: 500 });
    }
    return this.resizer.resize(source, { ...size, mimeType: row.mimeType });
  }
}
