import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { projectScope } from '../../core/scope/project-scope.js';
import { EmailDeliveryRepository, type EngagedEmail } from '../delivery/email-delivery.repository.js';
import { EMAIL_EVENT, EngagementEventsService, type SystemEvent } from './engagement-events.service.js';
import { TrackingLinks, type TrackedEmail } from './tracking-links.js';

export const INVALID_TRACKING_LINK = 'INVALID_TRACKING_LINK';

function invalidLink(): DomainError {
  return new DomainError(INVALID_TRACKING_LINK, 'invalid tracking link', {
    status: 400,
    suggestion: 'use the complete link from the email',
  });
}

function eventOf(name: string, emailId: string, email: EngagedEmail, extra: Record<string, string> = {}): SystemEvent[] {
  if (!email.contactId) return [];
  const data = { emailId, ...(email.campaignId ? { campaignId: email.campaignId } : {}), ...extra };
  return [{ contactId: email.contactId, name, data }];
}

/**
 * Opens and clicks of marketing emails, from the signed links in them (tracking-links.ts). Only the
 * first open and the first click of an email are recorded (on the email row, then as the contact's
 * `email.opened` / `email.clicked` event): a campaign sends one email per contact,
 * so its stats count each contact once however often the pixel loads or links are followed. A click
 * also counts as an open (mail clients that block images still follow links).
 */
@Injectable()
export class EngagementService {
  private readonly logger = new Logger(EngagementService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly links: TrackingLinks,
    private readonly emails: EmailDeliveryRepository,
    private readonly events: EngagementEventsService,
  ) {}

  /** The pixel was loaded. 400 for a token this service did not sign. */
  async opened(token: string): Promise<void> {
    const target = this.links.verifyOpen(token);
    if (!target) throw invalidLink();
    await this.record(target, false);
  }

  /** A tracked link was followed: answers the URL to redirect to (only ever one that was in the email). */
  async clicked(token: string): Promise<string> {
    const target = this.links.verifyClick(token);
    if (!target) throw invalidLink();
    await this.record(target, true, target.url);
    return target.url;
  }

  /**
   * Never fails the request: a person following a link must get there even if the database is away.
   * The events follow the email's update, each only from the call that made it (never twice), in the
   * same transaction: an open is counted with its `email.opened` event or not at all (and the workflows
   * the event starts begin in it too; they read through this transaction, not the pool).
   */
  private async record(target: TrackedEmail, click: boolean, url?: string): Promise<void> {
    const scope = projectScope(target.projectId);
    try {
      await this.dataSource.transaction(async (db) => {
        const events: SystemEvent[] = [];
        const clicked = click ? await this.emails.markClicked(db, scope, target.emailId) : null;
        const opened = await this.emails.markOpened(db, scope, target.emailId);
        if (opened) events.push(...eventOf(EMAIL_EVENT.opened, target.emailId, opened));
        if (clicked) events.push(...eventOf(EMAIL_EVENT.clicked, target.emailId, clicked, url ? { url } : {}));
        await this.events.record(db, scope, events);
      });
    } catch (err) {
      this.logger.error({ err: (err as Error).message, emailId: target.emailId }, 'recording an open or click failed');
    }
  }
}
