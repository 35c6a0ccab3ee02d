import { Injectable } from '@nestjs/common';
import type { ContactDataPrimitive } from '@app/contracts';
import { query, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';

export interface EventRow {
  id: string;
  name: string;
  contact_id: string;
  email: string;
  data: Record<string, ContactDataPrimitive>;
  created_at: Date;
}

export interface EventListFilter {
  limit: number;
  beforeId?: string;
  name?: string;
  contactId?: string;
  email?: string;
  from?: string;
  to?: string;
}

export interface EventNameRow {
  name: string;
  count: number;
  last_tracked_at: Date;
}

/** The reads of GET /events. Events are written by /v1/track's one statement (modules/track/track.repository.ts). */
@Injectable()
export class EventsRepository {
  /** One page (limit + 1 rows, newest first), each with its contact's email, and the total. */
  list(db: Db, scope: ProjectScope, filter: EventListFilter): Promise<{ rows: EventRow[]; total: number }> {
    const where = new SqlWhere().add('e.project_id = ?', scope.projectId).raw('c.project_id = $1');
    if (filter.name !== undefined) where.add('e.name = ?', filter.name);
    if (filter.contactId) where.add('e.contact_id = ?', filter.contactId);
    if (filter.email) where.add('lower(c.email) = lower(?)', filter.email);
    if (filter.from) where.add('e.created_at >= ?::timestamptz', filter.from);
    if (filter.to) where.add('e.created_at < ?::timestamptz', filter.to);
    return keysetPage<EventRow>(db, {
      select: 'e.id, e.name, e.contact_id, c.email, e.data, e.created_at',
      from: 'events e JOIN contacts c ON c.id = e.contact_id',
      idColumn: 'e.id',
      filter: where,
      beforeId: filter.beforeId,
      limit: filter.limit,
    });
  }

  /** Distinct names in name order (keyset on the name), with how often and when last each was tracked. */
  async names(db: Db, scope: ProjectScope, input: { limit: number; afterName?: string }): Promise<{ rows: EventNameRow[]; total: number }> {
    const params: unknown[] = [scope.projectId, input.limit + 1];
    let after = '';
    if (input.afterName !== undefined) {
      params.push(input.afterName);
      after = 'AND name > $3';
    }
    const [rows, [{ total }]] = await Promise.all([
      query<EventNameRow>(
        db,
        `SELECT name, count(*)::int AS count, max(created_at) AS last_tracked_at
           FROM events WHERE project_id = $1 ${after}
          GROUP BY name ORDER BY name LIMIT $2`,
        params,
      ),
      query<{ total: number }>(db, `SELECT count(DISTINCT name)::int AS total FROM events WHERE project_id = $1`, [scope.projectId]),
    ]);
    return { rows, total };
  }
}
