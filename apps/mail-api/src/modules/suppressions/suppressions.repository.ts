import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { execute, likePattern, query, queryOne, queryPrepared, SqlWhere, type Db } from '@app/service-kit';
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

/**
 * The first 28 hex digits of a statement's UUIDv7 ids (`xxxxxxxx-xxxx-7xxx-Vxxx-xxxx`): 48 bits of Unix
 * milliseconds, the version, 12 random bits, the variant, 30 more random bits; the last 8 digits are
 * the row's counter (at most 2^32 rows a statement, an import holds at most 1,000,000).
 */
export function importIdPrefix(now = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  const random = randomBytes(6).toString('hex');
  const variant = (8 | (parseInt(random[3], 16) & 3)).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(0, 3)}-${variant}${random.slice(4, 7)}-${random.slice(7, 11)}`;
}

/** Rows for the import's staging table: line i of `emails` goes with line i of `reasons`. */
export interface StagedRows {
  firstSeq: number;
  emails: string;
  reasons: string;
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
   * An import's staging table: a temporary table of the transaction `tx` (dropped at its end, also on
   * rollback), so a million rows are written to `suppressions` by one statement (`addStaged`) instead of
   * a statement per batch that maintains both indexes in file order.
   */
  async createImportStage(tx: Db): Promise<void> {
    await query(
      tx,
      `CREATE TEMP TABLE suppression_import (seq integer NOT NULL, email text NOT NULL, reason text NOT NULL) ON COMMIT DROP`,
    );
    // The sort in addStaged: in memory rather than in temporary files (this transaction only).
    await query(tx, `SET LOCAL work_mem = '64MB'`);
  }

  /**
   * Appends checked rows to the staging table, numbered in file order from `firstSeq` (the first entry
   * wins). The addresses and reasons come as two newline-joined texts, line i of one matching line i of
   * the other: a checked address holds no line break, and one text parameter is far cheaper to build and
   * to hold than an array of ten thousand strings.
   */
  async stageImportRows(tx: Db, input: StagedRows): Promise<void> {
    await queryPrepared(
      tx,
      `INSERT INTO suppression_import (seq, email, reason)
       SELECT $1::integer + r.n, r.email, r.reason
         FROM unnest(string_to_array($2::text, E'\n'), string_to_array($3::text, E'\n')) WITH ORDINALITY AS r(email, reason, n)`,
      [input.firstSeq, input.emails, input.reasons],
    );
  }

  /**
   * Moves the staged rows into the project's list in one statement: one row per address (its first in
   * the file), sorted by the unique index's key so the index is written in order rather than at random.
   * Addresses already listed are skipped. Answers how many were added.
   *
   * Ids: UUIDv7 with a counter (RFC 9562, 6.2 method 1) instead of `uuid_generate_v7()` per row: one
   * prefix for the statement (`importIdPrefix`: the time and 42 random bits) and the row's number in
   * key order, so a million ids cost no random generation each, are unique, and append to the
   * `(project_id, id)` index in order. The per-row function was a third of the statement's time.
   */
  addStaged(tx: Db, scope: ProjectScope): Promise<number> {
    return execute(
      tx,
      `INSERT INTO suppressions (id, project_id, email, reason, source)
       SELECT ($2::text || lpad(to_hex(row_number() OVER ()), 8, '0'))::uuid, $1::uuid, first.email, first.reason, 'api'
         FROM (SELECT DISTINCT ON (lower(email)) email, reason FROM suppression_import ORDER BY lower(email), seq) AS first
       ON CONFLICT (project_id, lower(email)) DO NOTHING`,
      [scope.projectId, importIdPrefix()],
    );
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
