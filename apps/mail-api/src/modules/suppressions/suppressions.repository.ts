import { Injectable } from '@nestjs/common';
import { likePattern, query, queryOne, queryPrepared, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import type { MailSuppression, SuppressionReason, SuppressionSource } from './suppressions.dto.js';

const COLUMNS = 'id, email, reason, source, detail, created_at';

export interface SuppressionRow {
  id: string;
  email: string;
  reason: SuppressionReason;
  source: SuppressionSource;
  detail: string | null;
  created_at: Date;
}

export function toSuppression(row: SuppressionRow): MailSuppression {
  return { email: row.email, reason: row.reason, source: row.source, detail: row.detail, createdAt: row.created_at.toISOString() };
}

export interface SuppressionToAdd {
  email: string;
  reason: SuppressionReason;
  source: SuppressionSource;
  detail: string | null;
}

/**
 * The one writer of `suppressions`. Addresses are unique per project case-insensitively (the index on
 * `(project_id, lower(email))`): every insert is `ON CONFLICT DO NOTHING`, so the first entry of an
 * address is kept. The delivery claim reads the same index (EmailDeliveryRepository).
 */
@Injectable()
export class SuppressionsRepository {
  list(
    db: Db,
    scope: ProjectScope,
    filter: { limit: number; beforeId?: string; reason?: SuppressionReason; search?: string },
  ): Promise<{ rows: SuppressionRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', scope.projectId);
    if (filter.reason) where.add('reason = ?', filter.reason);
    if (filter.search) where.add('lower(email) LIKE ?', likePattern(filter.search.toLowerCase()));
    return keysetPage<SuppressionRow>(db, {
      select: COLUMNS,
      from: 'suppressions',
      idColumn: 'id',
      filter: where,
      beforeId: filter.beforeId,
      limit: filter.limit,
    });
  }

  /** Adds the address unless listed; answers the new row, or null when it was listed already. */
  insert(db: Db, scope: ProjectScope, input: SuppressionToAdd): Promise<SuppressionRow | null> {
    return queryOne<SuppressionRow>(
      db,
      `INSERT INTO suppressions (project_id, email, reason, source, detail) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (project_id, lower(email)) DO NOTHING RETURNING ${COLUMNS}`,
      [scope.projectId, input.email, input.reason, input.source, input.detail?.slice(0, 1000) ?? null],
    );
  }

  findByEmail(db: Db, scope: ProjectScope, email: string): Promise<SuppressionRow | null> {
    return queryOne<SuppressionRow>(db, `SELECT ${COLUMNS} FROM suppressions WHERE project_id = $1 AND lower(email) = lower($2)`, [
      scope.projectId,
      email,
    ]);
  }

  /**
   * Many addresses in one statement (CSV import, a batch of bounces): rows already listed, and repeats
   * within the batch, are skipped. Answers how many were added.
   */
  async insertMany(db: Db, scope: ProjectScope, input: { rows: SuppressionToAdd[] }): Promise<number> {
    if (input.rows.length === 0) return 0;
    const [{ inserted }] = await queryPrepared<{ inserted: number }>(
      db,
      `WITH added AS (
         INSERT INTO suppressions (project_id, email, reason, source, detail)
         SELECT $1, r.email, r.reason, r.source, r.detail
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS r(email, reason, source, detail)
         ON CONFLICT (project_id, lower(email)) DO NOTHING
         RETURNING 1)
       SELECT count(*)::int AS inserted FROM added`,
      [
        scope.projectId,
        input.rows.map((r) => r.email),
        input.rows.map((r) => r.reason),
        input.rows.map((r) => r.source),
        input.rows.map((r) => r.detail),
      ],
    );
    return inserted;
  }

  async delete(db: Db, scope: ProjectScope, email: string): Promise<boolean> {
    const rows = await query<{ id: string }>(
      db,
      `DELETE FROM suppressions WHERE project_id = $1 AND lower(email) = lower($2) RETURNING id`,
      [scope.projectId, email],
    );
    return rows.length > 0;
  }
}
