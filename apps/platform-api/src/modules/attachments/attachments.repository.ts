import { Injectable } from '@nestjs/common';
import { type Db, execute, query, queryOne, queryPrepared } from '@app/service-kit';
import type { Snapshot } from '../../core/audit/command.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/** An attachment as the module works with it. */
export interface AttachmentRow {
  id: string;
  tenantId: string;
  organizationId: string | null;
  partitionCode: string;
  entityId: string;
  recordId: string;
  fileName: string;
  mimeType: string;
  fileSize: number;
  storageKey: string;
  checksum: string;
  /** An image's size as displayed (EXIF orientation applied); null until the image route first read it. */
  imageSize: { width: number; height: number } | null;
  createdAt: Date;
}

export interface NewAttachment {
  id: string;
  organizationId: string | null;
  partitionCode: string;
  entityId: string;
  recordId: string;
  fileName: string;
  mimeType: string;
  fileSize: number;
  storageKey: string;
  checksum: string;
}

/** Who reads a file: a tenant's scope (its own attachments and every public one), or nobody (public ones only). */
export interface ReadReach {
  tenantId: string | null;
  organizationIds: readonly string[] | null;
  publicPartitions: readonly string[];
}

interface AttachmentDbRow {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  partition_code: string;
  entity_id: string;
  record_id: string;
  file_name: string;
  mime_type: string;
  file_size: number;
  storage_key: string;
  checksum: string;
  image_width: number | null;
  image_height: number | null;
  created_at: Date;
}

const COLUMNS = `id, tenant_id, organization_id, partition_code, entity_id, record_id, file_name, mime_type, file_size,
  storage_key, checksum, image_width, image_height, created_at`;

/** Rows of the scope's tenant, and of its organizations when the scope is restricted (`$2`, `$3`). */
const IN_SCOPE = `tenant_id = $2 AND ($3::uuid[] IS NULL OR organization_id = ANY($3::uuid[]))`;

/**
 * An attachment as the action log records it (one statement, so the command bus folds the "after"
 * snapshot into its log INSERT). The storage key stays out: it is an internal detail.
 */
export const ATTACHMENT_SNAPSHOT_SQL = `
  SELECT jsonb_build_object(
           'id', a.id, 'organizationId', a.organization_id, 'partitionCode', a.partition_code,
           'entityId', a.entity_id, 'recordId', a.record_id, 'fileName', a.file_name, 'mimeType', a.mime_type,
           'fileSize', a.file_size, 'checksum', a.checksum,
           'createdAt', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS snapshot
    FROM attachments a WHERE a.id = $1 AND ($2::uuid IS NULL OR a.tenant_id = $2::uuid)`;

function toRow(r: AttachmentDbRow): AttachmentRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    organizationId: r.organization_id,
    partitionCode: r.partition_code,
    entityId: r.entity_id,
    recordId: r.record_id,
    fileName: r.file_name,
    mimeType: r.mime_type,
    fileSize: r.file_size,
    storageKey: r.storage_key,
    checksum: r.checksum,
    imageSize: r.image_width !== null && r.image_height !== null ? { width: r.image_width, height: r.image_height } : null,
    createdAt: r.created_at,
  };
}

/** Every statement of `attachments`, its one writer. */
@Injectable()
export class AttachmentsRepository {
  async insert(db: Db, scope: TenantScope, a: NewAttachment): Promise<AttachmentRow> {
    const row = await queryOne<AttachmentDbRow>(
      db,
      `INSERT INTO attachments (id, tenant_id, organization_id, partition_code, entity_id, record_id, file_name, mime_type,
                                file_size, storage_key, checksum, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       RETURNING ${COLUMNS}`,
      [
        a.id,
        scope.tenantId,
        a.organizationId,
        a.partitionCode,
        a.entityId,
        a.recordId,
        a.fileName,
        a.mimeType,
        a.fileSize,
        a.storageKey,
        a.checksum,
        scope.userId,
      ],
    );
    if (!row) throw new Error('attachment insert returned no row');
    return toRow(row);
  }

  /** Deletes the scope's attachment; null when there is none (another tenant's id included). */
  async delete(db: Db, scope: TenantScope, id: string): Promise<AttachmentRow | null> {
    const row = await queryOne<AttachmentDbRow>(db, `DELETE FROM attachments WHERE id = $1 AND ${IN_SCOPE} RETURNING ${COLUMNS}`, [
      id,
      scope.tenantId,
      scope.organizationIds,
    ]);
    return row ? toRow(row) : null;
  }

  /** One record's attachments in the scope, newest first. */
  async listForRecord(
    db: Db,
    scope: TenantScope,
    input: { entityId: string; recordId: string; limit: number; offset: number },
  ): Promise<AttachmentRow[]> {
    const rows = await query<AttachmentDbRow>(
      db,
      `SELECT ${COLUMNS} FROM attachments
        WHERE entity_id = $1 AND ${IN_SCOPE} AND record_id = $4
        ORDER BY created_at DESC, id DESC
        LIMIT $5 OFFSET $6`,
      [input.entityId, scope.tenantId, scope.organizationIds, input.recordId, input.limit, input.offset],
    );
    return rows.map(toRow);
  }

  /**
   * The attachment if the reach may read its file: one of the reach's tenant (and organizations), or
   * one in a public partition of any tenant. A prepared statement: every file and image request runs it.
   */
  async findReadable(db: Db, reach: ReadReach, id: string): Promise<AttachmentRow | null> {
    const rows = await queryPrepared<AttachmentDbRow>(
      db,
      `SELECT ${COLUMNS} FROM attachments
        WHERE id = $1
          AND (partition_code = ANY($4::text[])
               OR ($2::uuid IS NOT NULL AND ${IN_SCOPE}))`,
      [id, reach.tenantId, reach.organizationIds, reach.publicPartitions],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Records an image's size as displayed, read from its bytes by the image route (the same every time). */
  async setImageSize(db: Db, scope: TenantScope, input: { id: string; width: number; height: number }): Promise<void> {
    await execute(db, `UPDATE attachments SET image_width = $3, image_height = $4 WHERE id = $1 AND tenant_id = $2`, [
      input.id,
      scope.tenantId,
      input.width,
      input.height,
    ]);
  }

  /** The snapshot the action log keeps (ATTACHMENT_SNAPSHOT_SQL); `forUpdate` locks the row. */
  async snapshot(db: Db, input: { id: string; tenantId: string | null; forUpdate?: boolean }): Promise<Snapshot | null> {
    const row = await queryOne<{ snapshot: Snapshot }>(db, `${ATTACHMENT_SNAPSHOT_SQL}${input.forUpdate ? ' FOR UPDATE OF a' : ''}`, [
      input.id,
      input.tenantId,
    ]);
    return row?.snapshot ?? null;
  }
}
