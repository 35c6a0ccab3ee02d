import { Injectable } from '@nestjs/common';
import { execute, likePattern, query, queryOne, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { contactColumns, type ContactRow } from '../contacts/contacts.repository.js';
import { segmentAudiencePredicate, type SegmentCondition } from './segment-condition.js';

export type SegmentType = 'DYNAMIC' | 'STATIC';

const SEGMENT_COLUMNS = 'id, name, description, type, condition, created_at, updated_at';

export interface SegmentRow {
  id: string;
  name: string;
  description: string | null;
  type: SegmentType;
  condition: SegmentCondition | null;
  created_at: Date;
  updated_at: Date;
}

export interface SegmentFields {
  name: string;
  description: string | null;
  type: SegmentType;
  condition: SegmentCondition | null;
}

export interface SegmentListFilter {
  limit: number;
  beforeId?: string;
  search?: string;
  type?: SegmentType;
}

/** Every statement below binds the project id first. */
const PROJECT = { projectParam: '$1' };

/** Contact columns qualified by the alias the audience predicates are compiled for. */
const MEMBER_COLUMNS = contactColumns('c');

/**
 * The one writer of `segments` and `segment_members`; reads join contacts, events and campaigns.
 * Every statement is scoped to one project. Statements holding a compiled condition run unnamed
 * (`query`): their texts vary per segment and must not pile up as prepared statements.
 */
@Injectable()
export class SegmentsRepository {
  async insert(db: Db, scope: ProjectScope, fields: SegmentFields): Promise<SegmentRow> {
    const [row] = await query<SegmentRow>(
      db,
      `INSERT INTO segments (project_id, name, description, type, condition) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING ${SEGMENT_COLUMNS}`,
      [scope.projectId, fields.name, fields.description, fields.type, fields.condition && JSON.stringify(fields.condition)],
    );
    return row;
  }

  list(db: Db, scope: ProjectScope, filter: SegmentListFilter): Promise<{ rows: SegmentRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', scope.projectId);
    if (filter.type) where.add('type = ?', filter.type);
    if (filter.search) where.add('lower(name) LIKE ?', likePattern(filter.search.toLowerCase()));
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit };
    return keysetPage<SegmentRow>(db, { select: SEGMENT_COLUMNS, from: 'segments', idColumn: 'id', ...page });
  }

  /**
   * `lock`, inside the caller's transaction: `update` for a delete; `share` for member changes and for
   * a campaign that starts sending to the segment (a concurrent delete waits for them, then sees the
   * campaign; member changes of one segment do not wait for each other).
   */
  findById(db: Db, scope: ProjectScope, input: { id: string; lock?: 'update' | 'share' }): Promise<SegmentRow | null> {
    const lock = input.lock === 'update' ? ' FOR UPDATE' : input.lock === 'share' ? ' FOR SHARE' : '';
    return queryOne<SegmentRow>(db, `SELECT ${SEGMENT_COLUMNS} FROM segments WHERE project_id = $1 AND id = $2${lock}`, [
      scope.projectId,
      input.id,
    ]);
  }

  /** Sets name, description and/or condition (at least one given). */
  update(db: Db, scope: ProjectScope, input: { id: string; patch: Partial<Omit<SegmentFields, 'type'>> }): Promise<SegmentRow | null> {
    const params: unknown[] = [scope.projectId, input.id];
    const sets: string[] = [];
    const set = (column: string, value: unknown, cast = '') => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (input.patch.name !== undefined) set('name', input.patch.name);
    if (input.patch.description !== undefined) set('description', input.patch.description);
    if (input.patch.condition !== undefined) set('condition', JSON.stringify(input.patch.condition), '::jsonb');
    return queryOne<SegmentRow>(
      db,
      `UPDATE segments SET ${sets.join(', ')}, updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING ${SEGMENT_COLUMNS}`,
      params,
    );
  }

  async delete(db: Db, scope: ProjectScope, id: string): Promise<boolean> {
    return (await execute(db, `DELETE FROM segments WHERE project_id = $1 AND id = $2`, [scope.projectId, id])) > 0;
  }

  /** Whether a SCHEDULED or SENDING campaign of the project targets the segment (campaigns_active_segment_idx). */
  async isUsedByActiveCampaign(db: Db, scope: ProjectScope, segmentId: string): Promise<boolean> {
    const row = await queryOne<{ used: boolean }>(
      db,
      `SELECT EXISTS (
         SELECT 1 FROM campaigns WHERE project_id = $1 AND segment_id = $2 AND status IN ('SCHEDULED', 'SENDING')
       ) AS used`,
      [scope.projectId, segmentId],
    );
    return row?.used ?? false;
  }

  /**
   * For the reads below, inside the caller's transaction. Their cost estimates (a subplan per contact
   * costed even when a hashed one runs) pass jit_above_cost on projects of ~100k contacts, and compiling
   * them took longer than running them (1.3 s JIT for a 0.1 s count, bench/campaign/segment-count.mjs).
   */
  async disableJit(tx: Db): Promise<void> {
    await execute(tx, 'SET LOCAL jit = off');
  }

  /** Live member count of one segment: one COUNT over the project's contacts with its audience predicate. */
  async countMembers(db: Db, scope: ProjectScope, segment: SegmentRow): Promise<number> {
    const params: unknown[] = [scope.projectId];
    const predicate = segmentAudiencePredicate(segment, 'c', params, PROJECT);
    const row = await queryOne<{ n: number }>(
      db,
      `SELECT count(*)::int AS n FROM contacts c WHERE c.project_id = $1 AND ${predicate}`,
      params,
    );
    return row?.n ?? 0;
  }

  /**
   * Live member counts of a page of segments in two statements: the dynamic ones in one pass over the
   * project's contacts (a `count(*) FILTER` per segment), the static ones from their member rows.
   */
  async countMembersOfMany(db: Db, scope: ProjectScope, segments: SegmentRow[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const dynamic = segments.filter((s) => s.type === 'DYNAMIC');
    const staticIds = segments.filter((s) => s.type === 'STATIC').map((s) => s.id);
    const work: Promise<void>[] = [];
    if (dynamic.length > 0) {
      const params: unknown[] = [scope.projectId];
      const columns = dynamic.map((s, i) => `count(*) FILTER (WHERE ${segmentAudiencePredicate(s, 'c', params, PROJECT)})::int AS n${i}`);
      work.push(
        queryOne<Record<string, number>>(db, `SELECT ${columns.join(', ')} FROM contacts c WHERE c.project_id = $1`, params).then((row) =>
          dynamic.forEach((s, i) => counts.set(s.id, row?.[`n${i}`] ?? 0)),
        ),
      );
    }
    if (staticIds.length > 0) {
      work.push(
        query<{ segment_id: string; n: number }>(
          db,
          `SELECT segment_id, count(*)::int AS n FROM segment_members WHERE project_id = $1 AND segment_id = ANY($2::uuid[]) GROUP BY segment_id`,
          [scope.projectId, staticIds],
        ).then((rows) => {
          staticIds.forEach((id) => counts.set(id, 0));
          rows.forEach((r) => counts.set(r.segment_id, r.n));
        }),
      );
    }
    await Promise.all(work);
    return counts;
  }

  /** One page of members (limit + 1 contacts, newest first, keyset by contact id) and their total. */
  async listMembers(
    db: Db,
    scope: ProjectScope,
    input: { segment: SegmentRow; beforeId?: string; limit: number },
  ): Promise<{ rows: ContactRow[]; total: number }> {
    const params: unknown[] = [scope.projectId];
    const predicate = segmentAudiencePredicate(input.segment, 'c', params, PROJECT);
    const countParams = [...params];
    let keyset = '';
    if (input.beforeId) {
      params.push(input.beforeId);
      keyset = ` AND c.id < $${params.length}`;
    }
    params.push(input.limit + 1);
    const [rows, [{ total }]] = await Promise.all([
      query<ContactRow>(
        db,
        `SELECT ${MEMBER_COLUMNS} FROM contacts c WHERE c.project_id = $1 AND ${predicate}${keyset} ORDER BY c.id DESC LIMIT $${params.length}`,
        params,
      ),
      query<{ total: number }>(db, `SELECT count(*)::int AS total FROM contacts c WHERE c.project_id = $1 AND ${predicate}`, countParams),
    ]);
    return { rows, total };
  }

  /** Adds the project's contacts with these emails (any letter case) to a static segment; returns how many were new members. */
  addMembers(db: Db, scope: ProjectScope, input: { segmentId: string; emails: string[] }): Promise<number> {
    return execute(
      db,
      `INSERT INTO segment_members (project_id, segment_id, contact_id)
       SELECT $1, $2, c.id FROM contacts c
        WHERE c.project_id = $1 AND lower(c.email) IN (SELECT lower(e.email) FROM unnest($3::text[]) AS e(email))
       ON CONFLICT (segment_id, contact_id) DO NOTHING`,
      [scope.projectId, input.segmentId, input.emails],
    );
  }

  /** Removes the members with these emails (any letter case); returns how many were members. */
  removeMembers(db: Db, scope: ProjectScope, input: { segmentId: string; emails: string[] }): Promise<number> {
    return execute(
      db,
      `DELETE FROM segment_members m USING contacts c
        WHERE m.project_id = $1 AND m.segment_id = $2 AND c.id = m.contact_id
          AND c.project_id = $1 AND lower(c.email) IN (SELECT lower(e.email) FROM unnest($3::text[]) AS e(email))`,
      [scope.projectId, input.segmentId, input.emails],
    );
  }
}
