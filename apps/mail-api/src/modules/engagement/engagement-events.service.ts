import { Injectable } from '@nestjs/common';
import type { Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { TrackRepository, type SystemEventRow } from '../track/track.repository.js';
import { WorkflowTriggerService } from '../workflows/workflow-trigger.service.js';

/** The service's own contact events (reserved names: /v1/track refuses them). */
export const EMAIL_EVENT = {
  sent: 'email.sent',
  opened: 'email.opened',
  clicked: 'email.clicked',
  bounced: 'email.bounced',
  suppressed: 'email.suppressed',
  complained: 'email.complained',
} as const;

export type EmailEventName = (typeof EMAIL_EVENT)[keyof typeof EMAIL_EVENT];

export interface SystemEvent {
  contactId: string;
  name: string;
  data: Record<string, unknown>;
}

/**
 * The one way the service records its own contact events (`email.sent`, `email.opened`,
 * `email.clicked`, `email.bounced`): segments read them like tracked events
 * (`event.email.opened triggered`), and workflows start executions from them (their trigger call
 * belongs here, after the insert). Set-based: one statement for any number of events. Pass the
 * caller's transaction as `db` so the events commit with the change they describe.
 */
@Injectable()
export class EngagementEventsService {
  constructor(
    private readonly tracks: TrackRepository,
    private readonly workflows: WorkflowTriggerService,
  ) {}

  async record(db: Db, scope: ProjectScope, events: readonly SystemEvent[]): Promise<SystemEventRow[]> {
    if (events.length === 0) return [];
    const rows = await this.tracks.insertSystemEvents(db, scope, events);
    // Workflows on `email.*` start (and waits resume) in the same transaction as the events.
    await this.workflows.onEvents(
      db,
      rows.map((row) => ({ id: row.id, projectId: scope.projectId, name: row.name })),
    );
    return rows;
  }
}
