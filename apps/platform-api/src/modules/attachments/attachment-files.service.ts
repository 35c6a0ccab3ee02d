import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import { type AttachmentPartition, partitionOf, PUBLIC_PARTITION_CODES } from './attachment-partitions.js';
import { AttachmentsRepository, type AttachmentRow } from './attachments.repository.js';
import { ATTACHMENT_RESOURCE } from './attachments.service.js';
import { contentDisposition, etagMatches, ifRangeAllows, parseRange, type ServedFile } from './file-response.js';
import { isInlineSafe } from './mime-sniffer.js';
import { ATTACHMENT_STORAGE, type AttachmentStorage } from './storage/attachment-storage.js';

/** What the browser must not run: served as a download, sandboxed if opened anyway. */
const ACTIVE_CONTENT_CSP = "default-src 'none'; sandbox";

export interface FileRequest {
  download: boolean;
  range?: string;
  ifNoneMatch?: string;
  ifRange?: string;
}

export interface ReadableAttachment {
  row: AttachmentRow;
  partition: AttachmentPartition;
}

/**
 * `GET /attachments/file/{id}` and the access rules of every file read (the image route's too).
 * A caller without a session reads public partitions only: any other id, existing or not, is 401
 * (authentication could make it readable, and nothing is said about whether it exists). An
 * authenticated caller reads its tenant's attachments (in its organizations) and public ones; other
 * ids are 404; a private partition also needs `attachments.view` (403).
 */
@Injectable()
export class AttachmentFilesService {
  private readonly logger = new Logger(AttachmentFilesService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly attachments: AttachmentsRepository,
    private readonly accessLog: AccessLogService,
    @Inject(ATTACHMENT_STORAGE) private readonly storage: AttachmentStorage,
  ) {}

  async findReadable(auth: AuthContext | null, id: string): Promise<ReadableAttachment> {
    const row = await this.attachments.findReadable(
      this.dataSource,
      {
        tenantId: auth?.tenantId ?? null,
        organizationIds: auth && !auth.isSuperAdmin ? auth.acl.organizations : null,
        publicPartitions: PUBLIC_PARTITION_CODES,
      },
      id,
    );
    if (!row) throw auth ? DomainError.notFound('attachment not found') : DomainError.unauthorized('authentication required');
    const partition = partitionOf(row.partitionCode);
    if (!partition) {
      this.logger.error({ attachmentId: row.id, partitionCode: row.partitionCode }, 'attachment in an undefined partition');
      throw new DomainError('partition_misconfigured', 'attachment partition is misconfigured', { status: 500 });
    }
    if (!partition.publicRead && !auth?.can('attachments.view')) {
      throw DomainError.forbidden('missing required features: attachments.view');
    }
    return { row, partition };
  }

  /** One access log entry per read of the caller's own tenant's files (anonymous public reads have no actor to log). */
  recordRead(auth: AuthContext | null, row: AttachmentRow, context: Record<string, unknown>): void {
    if (!auth || auth.tenantId !== row.tenantId) return;
    this.accessLog.record(auth, { resourceKind: ATTACHMENT_RESOURCE, resourceId: row.id, accessType: 'read', fields: ['file'], context });
  }

  async serve(auth: AuthContext | null, id: string, request: FileRequest): Promise<ServedFile> {
    const { row, partition } = await this.findReadable(auth, id);
    const etag = `"${row.checksum}"`;
    const inline = !request.download && isInlineSafe(row.mimeType);
    const headers: Record<string, string> = {
      'content-type': row.mimeType,
      etag,
      'cache-control': partition.cacheControl,
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', row.fileName),
    };
    if (!isInlineSafe(row.mimeType)) headers['content-security-policy'] = ACTIVE_CONTENT_CSP;
    if (etagMatches(request.ifNoneMatch, etag)) return { status: 304, headers: withoutBodyHeaders(headers), body: null };

    const range = ifRangeAllows(request.ifRange, etag) ? parseRange(request.range, row.fileSize) : ({ kind: 'whole' } as const);
    if (range.kind === 'unsatisfiable') {
      throw new DomainError('range_not_satisfiable', 'requested range not satisfiable', {
        status: 416,
        headers: { 'Content-Range': `bytes */${row.fileSize}` },
      });
    }
    const object = await this.storage.read(row.storageKey, range.kind === 'partial' ? range : undefined);
    if (!object) {
      this.logger.error({ attachmentId: row.id }, 'stored bytes of an attachment are missing');
      throw new DomainError('content_missing', 'attachment content is missing', { status: 500 });
    }
    this.recordRead(auth, row, { route: 'file', download: !inline, range: range.kind === 'partial' });
    headers['content-length'] = String(object.length);
    if (range.kind === 'partial') {
      headers['content-range'] = `bytes ${range.start}-${range.start + object.length - 1}/${row.fileSize}`;
      return { status: 206, headers, body: object.body };
    }
    return { status: 200, headers, body: object.body };
  }
}

/** A 304 repeats the validators and caching headers, not the representation's own (RFC 9110 15.4.5). */
export function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
  const { etag, 'cache-control': cacheControl } = headers;
  return { etag, 'cache-control': cacheControl };
}
