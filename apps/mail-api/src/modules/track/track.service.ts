import { Injectable } from '@nestjs/common';
import type { MailTrackResult } from '@app/contracts';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { scopeOf } from '../../core/scope/project-scope.js';
import { parseContactData } from '../contacts/contact-data.js';
import type { TrackBody } from './track.dto.js';
import { TrackBatcher } from './track-batcher.js';

/** POST /v1/track: records an event of the calling project for a contact. */
@Injectable()
export class TrackService {
  constructor(private readonly tracker: TrackBatcher) {}

  /**
   * Creates or updates the contact and records the event, atomically. With the public key (front-end
   * code: anyone can read it) the contact's flag is set only when the call creates it, and data keys it
   * already has are neither overwritten nor deleted (TrackBatcher's applyTrackCall).
   */
  async track(project: ProjectContext, body: TrackBody): Promise<MailTrackResult> {
    const row = await this.tracker.track({
      projectId: scopeOf(project).projectId,
      keyKind: project.keyKind,
      email: body.email,
      subscribed: body.subscribed,
      patch: parseContactData(body.data),
      eventName: body.event,
    });
    return { contact: row.contact_id, event: row.id, timestamp: row.created_at.toISOString() };
  }
}
