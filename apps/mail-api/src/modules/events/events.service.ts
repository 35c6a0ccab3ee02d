import { Injectable } from '@nestjs/common';
import type { MailEventName, MailList, MailTrackedEvent, MailTrackResult } from '@app/contracts';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { parseContactData } from '../contacts/contact-data.js';
import type { ListEventNamesQuery, ListEventsQuery, TrackBody } from './events.dto.js';
import { EventsRepository, type EventRow } from './events.repository.js';
import { TrackBatcher } from './track-batcher.js';

function toEvent(row: EventRow): MailTrackedEvent {
  return {
    id: row.id,
    name: row.name,
    contact: { id: row.contact_id, email: row.email },
    data: row.data,
    createdAt: row.created_at.toISOString(),
  };
}

/** Tracked events of the calling project: recording them (POST /v1/track) and listing them. */
@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventsRepository,
    private readonly tracker: TrackBatcher,
  ) {}

  /** Creates or updates the contact and records the event, atomically. */
  async track(project: ProjectContext, body: TrackBody): Promise<MailTrackResult> {
    const row = await this.tracker.track({
      projectId: project.id,
      email: body.email,
      subscribed: body.subscribed,
      patch: parseContactData(body.data),
      eventName: body.event,
    });
    return { contact: row.contact_id, event: row.id, timestamp: row.created_at.toISOString() };
  }

  async list(project: ProjectContext, query: ListEventsQuery): Promise<MailList<MailTrackedEvent>> {
    const { rows, total } = await this.events.list(project.id, {
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
    const { rows, total } = await this.events.names(project.id, query.limit, afterName);
    const { page, hasMore } = takePage(rows, query.limit);
    return {
      items: page.map((r) => ({ name: r.name, count: r.count, lastTrackedAt: r.last_tracked_at.toISOString() })),
      nextCursor: hasMore ? encodeCursor(page[page.length - 1].name) : null,
      hasMore,
      total,
    };
  }
}
