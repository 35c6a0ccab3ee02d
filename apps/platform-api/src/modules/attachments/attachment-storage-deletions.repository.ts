import { Injectable } from '@nestjs/common';
import { type Db, execute, query } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/** A storage key (or a prefix ending with `/`) whose bytes are to be removed. */
export interface PendingDeletion {
  id: string;
  tenantId: string;
  storageKey: string;
  attempts: number;
}

interface PendingDeletionDbRow {
  id: string;
  tenant_id: string;
  storage_key: string;
  attempts: number;
}

const toPending = (r: PendingDeletionDbRow): PendingDeletion => ({
  id: r.id,
  tenantId: r.tenant_id,
  storageKey: r.storage_key,
  attempts: r.attempts,
});

/** After the n-th failed removal, the next one is tried 2^n seconds later, at most this long. */
export const MAX_RETRY_DELAY_SECONDS = 300;

/**
 * Every statement of `attachment_storage_deletions`, its one writer: stored bytes that no row points
 * at any more, kept until the storage confirms they are gone.
 */
@Injectable()
export class AttachmentStorageDeletionsRepository {
  /**
   * Records keys to remove, due in `holdSeconds` (the caller removes them itself first; the sweep
   * takes over if it does not get to confirm). A key already pending is rescheduled the same way.
   */
  async enqueue(db: Db, scope: TenantScope, input: { storageKeys: readonly string[]; holdSeconds: number }): Promise<PendingDeletion[]> {
    if (!input.storageKeys.length) return [];
    const rows = await query<PendingDeletionDbRow>(
      db,
      `INSERT INTO attachment_storage_deletions (tenant_id, storage_key, next_attempt_at)
       SELECT $1, key, now() + make_interval(secs => $3) FROM unnest($2::text[]) AS key
       ON CONFLICT (tenant_id, storage_key) DO UPDATE SET next_attempt_at = EXCLUDED.next_attempt_at
       RETURNING id, tenant_id, storage_key, attempts`,
      [scope.tenantId, input.storageKeys, input.holdSeconds],
    );
    return rows.map(toPending);
  }

  /**
   * A tenant about to be deleted: its whole object prefix (`objectsPrefix`, which also holds bytes no
   * row knows of) and the variant prefix (`variantsRoot` + id + `/`) of each of its attachments, due now.
   */
  async enqueueOfTenant(db: Db, scope: TenantScope, input: { objectsPrefix: string; variantsRoot: string }): Promise<number> {
    return execute(
      db,
      `INSERT INTO attachment_storage_deletions (tenant_id, storage_key)
       SELECT $1, $2::text
       UNION ALL
       SELECT tenant_id, $3::text || id::text || '/' FROM attachments WHERE tenant_id = $1
       ON CONFLICT (tenant_id, storage_key) DO UPDATE SET next_attempt_at = now()`,
      [scope.tenantId, input.objectsPrefix, input.variantsRoot],
    );
  }

  /**
   * The sweep, across tenants (so no scope): claims up to `limit` due rows for `leaseSeconds` (a worker
   * that dies holding them gives them back then); concurrent sweeps claim different rows. The pick is
   * a MATERIALIZED CTE, run exactly once, whatever the plan: a LIMIT ... SKIP LOCKED subquery re-run per
   * candidate row locks the next `limit` rows each time (the pending-action expiry's bug).
   */
  async claimDue(db: Db, input: { limit: number; leaseSeconds: number }): Promise<PendingDeletion[]> {
    const rows = await query<PendingDeletionDbRow>(
      db,
      `WITH picked AS MATERIALIZED (
         SELECT id FROM attachment_storage_deletions WHERE next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED
       )
       UPDATE attachment_storage_deletions SET next_attempt_at = now() + make_interval(secs => $2)
        WHERE id IN (SELECT id FROM picked)
        RETURNING id, tenant_id, storage_key, attempts`,
      [input.limit, input.leaseSeconds],
    );
    return rows.map(toPending);
  }

  /** The bytes are gone: the rows go too. */
  async complete(db: Db, ids: readonly string[]): Promise<void> {
    if (ids.length) await execute(db, `DELETE FROM attachment_storage_deletions WHERE id = ANY($1::bigint[])`, [ids]);
  }

  /** Failed removals: counted, their error kept, tried again after 2^attempts seconds (at most MAX_RETRY_DELAY_SECONDS). */
  async fail(db: Db, failures: readonly { id: string; error: string }[]): Promise<void> {
    if (!failures.length) return;
    await execute(
      db,
      `UPDATE attachment_storage_deletions d
          SET attempts = d.attempts + 1, last_error = f.error,
              next_attempt_at = now() + make_interval(secs => least($3::float8, 2 ^ least(d.attempts + 1, 20)))
         FROM unnest($1::bigint[], $2::text[]) AS f(id, error)
        WHERE d.id = f.id`,
      [failures.map((f) => f.id), failures.map((f) => f.error), MAX_RETRY_DELAY_SECONDS],
    );
  }

  /** Seconds until the earliest pending row is due (0: now), or null when nothing is pending. */
  async secondsToNextDue(db: Db): Promise<number | null> {
    const [row] = await query<{ seconds: number | null }>(
      db,
      `SELECT greatest(0, extract(epoch FROM min(next_attempt_at) - now()))::float8 AS seconds FROM attachment_storage_deletions`,
    );
    return row?.seconds ?? null;
  }
}
