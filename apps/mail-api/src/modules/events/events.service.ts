import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { MailEventName, MailList, MailTrackedEvent } from '@app/contracts';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { scopeOf } from '../../core/scope/project-scope.js';
import type { ListEventNamesQuery, ListEventsQuery } from './events.dto.js';
import { EventsRepository, type EventRow } from './events.repository.js';

function toEvent(row: EventRow): MailTrackedEvent {
  return {
    id: row.id,
    name: row.name,
    contact: { id: row.contact_id, email: row.email },
    data: row.data,
    createdAt: row.created_at.toISOString(),
  };
}

/** Tracked events of the calling project (GET /events); POST /v1/track records them (modules/track). */
@Injectable()
export class EventsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EventsRepository,
  ) {}

  async list(project: ProjectContext, query: ListEventsQuery): Promise<MailList<MailTrackedEvent>> {
    const { rows, total } = await this.events.list(this.dataSource, scopeOf(project), {
      limit: query.limit,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      name: query.name,
      contactId: query.contactId,
      email: query.email,
      from: query.from,
      to: query.to,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    return {
      items: page.map(toEvent),
      nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null,
      hasMore,
      total,
    };
  }

  async names(project: ProjectContext, query: ListEventNamesQuery): Promise<MailList<MailEventName>> {
    const afterName = query.cursor ? decodeCursor(query.cursor) : undefined;
    const { rows, total } = await this.events.names(this.dataSource, scopeOf(project), { limit: query.limit, afterName });
    const { page, hasMore } = takePage(rows, query.limit);
    return {
      items: page.map((r) => ({ name: r.name, count: r.count, lastTrackedAt: r.last_tracked_at.toISOString() })),
      nextCursor: hasMore ? encodeCursor(page[page.length - 1].name) : null,
      hasMore,
      total,
    };
  }
}
