import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import type { CommandDefinition } from '../../core/audit/command.js';
import { PlatformEventId } from '../../core/events/event-ids.js';
import { scopeOf } from '../../core/scope/tenant-scope.js';
import { DEFAULT_PARTITION } from './attachment-partitions.js';
import { AttachmentStorageCleanup } from './attachment-storage-cleanup.service.js';
import type { PendingDeletion } from './attachment-storage-deletions.repository.js';
import { ATTACHMENTS_PAGE_SIZE_DEFAULT, type AttachmentItemDto, type AttachmentListDto, type UploadResultDto } from './attachments.dto.js';
import { ATTACHMENT_SNAPSHOT_SQL, AttachmentsRepository, type AttachmentRow, type NewAttachment } from './attachments.repository.js';
import { variantPrefix } from './storage/attachment-storage.js';
import type { UploadedAttachmentFile } from './storage/streaming-upload.engine.js';

export const ATTACHMENT_RESOURCE = 'attachments.attachment';
const LIST_FIELDS = ['id', 'url', 'fileName', 'fileSize', 'mimeType', 'partitionCode', 'createdAt'];
const FILE_NAME_MAX_LENGTH = 255;

/** The API item of an attachment (`url` is its file route). */
export function toAttachmentItem(row: AttachmentRow): AttachmentItemDto {
  return {
    id: row.id,
    url: `/attachments/file/${row.id}`,
    fileName: row.fileName,
    fileSize: row.fileSize,
    mimeType: row.mimeType,
    partitionCode: row.partitionCode,
    createdAt: row.createdAt.toISOString(),
    content: null,
  };
}

/**
 * Uploads, lists and deletes attachments. The bytes are already stored when `upload` runs (the
 * route's multer engine streamed them); the row is written by a command (action log entry, event),
 * and the stored object is removed again if that fails. A delete removes the row in its command,
 * which also records the object and its resized variants as pending removals (same transaction);
 * they are removed after commit, and retried by the worker until gone if the storage refuses
 * (AttachmentStorageCleanup). No row ever points at missing bytes, and no bytes outlive their row.
 * Neither command is undoable: the bytes of a deleted file are gone.
 */
@Injectable()
export class AttachmentsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly attachments: AttachmentsRepository,
    private readonly bus: CommandBus,
    private readonly accessLog: AccessLogService,
    private readonly cleanup: AttachmentStorageCleanup,
  ) {
    bus.register(this.uploadCommand, this.deleteCommand);
  }

  private readonly commandBase = {
    resourceKind: ATTACHMENT_RESOURCE,
    features: ['attachments.manage'],
    snapshotScope: (auth: AuthContext) => ({ tenantId: auth.tenantId }),
    snapshot: (tx: EntityManager, id: string, options?: { forUpdate?: boolean; tenantId?: string | null }) =>
      this.attachments.snapshot(tx, { id, tenantId: options?.tenantId ?? null, forUpdate: options?.forUpdate }),
    snapshotSql: ATTACHMENT_SNAPSHOT_SQL,
  };

  private readonly uploadCommand: CommandDefinition<NewAttachment, AttachmentRow> = {
    ...this.commandBase,
    id: 'attachments.upload',
    label: 'Upload attachment',
    actionType: 'create',
    event: PlatformEventId.AttachmentCreated,
    execute: async (tx, auth, input) => {
      const row = await this.attachments.insert(tx, scopeOf(auth), input);
      return { resourceId: row.id, result: row };
    },
  };

  /** Deletes the row and records, in the same transaction, the bytes it orphans (the file and its variants). */
  private readonly deleteCommand: CommandDefinition<{ id: string }, PendingDeletion[]> = {
    ...this.commandBase,
    id: 'attachments.delete',
    label: 'Delete attachment',
    actionType: 'delete',
    event: PlatformEventId.AttachmentDeleted,
    targetId: (input) => input.id,
    execute: async (tx, auth, input) => {
      const scope = scopeOf(auth);
      const row = await this.attachments.delete(tx, scope, input.id);
      if (!row) throw DomainError.notFound('attachment not found');
      const pending = await this.cleanup.enqueue(tx, scope, [row.storageKey, variantPrefix(row.id)]);
      return { resourceId: row.id, result: pending };
    },
  };

  async list(
    auth: AuthContext,
    query: { entityId: string; recordId: string; page?: number; pageSize?: number },
  ): Promise<AttachmentListDto> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? ATTACHMENTS_PAGE_SIZE_DEFAULT;
    const rows = await this.attachments.listForRecord(this.dataSource, scopeOf(auth), {
      entityId: query.entityId,
      recordId: query.recordId,
      limit: pageSize,
      offset: (page - 1) * pageSize,
    });
    this.accessLog.record(auth, {
      resourceKind: ATTACHMENT_RESOURCE,
      accessType: 'read:list',
      fields: LIST_FIELDS,
      context: { entityId: query.entityId, recordId: query.recordId, page, pageSize, returned: rows.length },
    });
    return { items: rows.map(toAttachmentItem) };
  }

  /** `file` is what the upload engine stored (undefined when the form had no `file` part). */
  async upload(
    auth: AuthContext,
    fields: { entityId: string; recordId: string; partitionCode?: string },
    file: UploadedAttachmentFile | undefined,
  ): Promise<UploadResultDto> {
    if (!file) throw DomainError.badRequest('file is required', [{ field: 'file', code: 'isDefined', message: 'file is required' }]);
    try {
      const row = await this.bus.execute(auth, this.uploadCommand, {
        id: file.attachmentId,
        organizationId: auth.organizationId,
        partitionCode: fields.partitionCode ?? DEFAULT_PARTITION,
        entityId: fields.entityId,
        recordId: fields.recordId,
        fileName: cleanFileName(file.originalname),
        mimeType: file.mimeType,
        fileSize: file.size,
        storageKey: file.storageKey,
        checksum: file.checksum,
      });
      return { ok: true, item: toAttachmentItem(row) };
    } catch (err) {
      // No row points at the stored bytes: they go (retried by the sweep if the storage refuses now).
      await this.cleanup.discard(scopeOf(auth), [file.storageKey]);
      throw err;
    }
  }

  async remove(auth: AuthContext, id: string): Promise<{ ok: true }> {
    const pending = await this.bus.execute(auth, this.deleteCommand, { id });
    await this.cleanup.removeNow(pending);
    return { ok: true };
  }
}

/**
 * The client's file name, kept for display and downloads: control characters dropped, path parts
 * (a client may send `C:\x\y.pdf`) cut, at most 255 characters; `file` when nothing is left.
 */
export function cleanFileName(name: string | undefined): string {
  const printable = [...(name ?? '')].filter((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f).join('');
  const base = printable.split(/[\\/]/).pop() ?? '';
  const trimmed = base.trim().slice(0, FILE_NAME_MAX_LENGTH);
  return trimmed || 'file';
}
