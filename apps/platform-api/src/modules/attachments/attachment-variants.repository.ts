import { Injectable } from '@nestjs/common';
import { type Db, execute, query, queryOne, queryPrepared } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/**
 * Every statement of `attachment_variants`, its one writer: which resized variants of an attachment
 * are stored, and when each was last served (the order of least recent use).
 */
@Injectable()
export class AttachmentVariantsRepository {
  /**
   * Marks a variant used now; false when it is not listed (never stored, or removed). A prepared
   * statement: every image request that names a size runs it.
   */
  async touch(db: Db, scope: TenantScope, input: { attachmentId: string; variant: string }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE attachment_variants SET last_used_at = clock_timestamp()
        WHERE tenant_id = $1 AND attachment_id = $2 AND variant = $3 RETURNING 1 AS touched`,
      [scope.tenantId, input.attachmentId, input.variant],
    );
    return rows.length > 0;
  }

  /**
   * Locks the attachment's row until the transaction ends, so the variant lists of one attachment
   * change one writer at a time (across instances); false when the attachment is gone. A no-key
   * lock: it does not hold up reads, nor the foreign-key checks of other tables.
   */
  async lockAttachment(db: Db, scope: TenantScope, attachmentId: string): Promise<boolean> {
    const row = await queryOne(db, `SELECT 1 AS found FROM attachments WHERE id = $1 AND tenant_id = $2 FOR NO KEY UPDATE`, [
      attachmentId,
      scope.tenantId,
    ]);
    return row !== null;
  }

  /** Lists a variant as stored and used now (again, if it was listed). */
  async upsert(db: Db, scope: TenantScope, input: { attachmentId: string; variant: string }): Promise<void> {
    await execute(
      db,
      `INSERT INTO attachment_variants (tenant_id, attachment_id, variant) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, attachment_id, variant) DO UPDATE SET last_used_at = clock_timestamp()`,
      [scope.tenantId, input.attachmentId, input.variant],
    );
  }

  /** Unlists every variant of the attachment but the `keep` most recently used; returns the unlisted ones. */
  async evictBeyond(db: Db, scope: TenantScope, input: { attachmentId: string; keep: number }): Promise<string[]> {
    const rows = await query<{ variant: string }>(
      db,
      `DELETE FROM attachment_variants
        WHERE tenant_id = $1 AND attachment_id = $2
          AND variant IN (SELECT variant FROM attachment_variants
                           WHERE tenant_id = $1 AND attachment_id = $2
                           ORDER BY last_used_at DESC, variant
                           OFFSET $3)
        RETURNING variant`,
      [scope.tenantId, input.attachmentId, input.keep],
    );
    return rows.map((r) => r.variant);
  }
}
