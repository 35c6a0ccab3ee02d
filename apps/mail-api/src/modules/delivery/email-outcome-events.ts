import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Db } from '@app/service-kit';
import { projectScope, type ProjectScope } from '../../core/scope/project-scope.js';
import { EMAIL_EVENT, EngagementEventsService, type SystemEvent } from '../engagement/engagement-events.service.js';
import type { ClaimedEmail } from './email-rows.js';

/** A contact event of an email's outcome, with the project it belongs to. */
export interface OutcomeEvent {
  projectId: string;
  event: SystemEvent;
}

/** Tries of the outcome and its event together before the outcome is written alone. */
const ATOMIC_TRIES = 2;

/**
 * The `email.sent` event of a campaign or workflow email to a contact (other workflows may start from a
 * workflow's; never that workflow: WorkflowTriggerService). /v1/send emails make none.
 */
export function sentEvent(email: ClaimedEmail): OutcomeEvent | null {
  if ((!email.campaignId && !email.workflowId) || !email.contactId) return null;
  return { projectId: email.projectId, event: { contactId: email.contactId, name: EMAIL_EVENT.sent, data: eventData(email) } };
}

/** The `email.bounced` event of any email to a contact (a permanent SMTP refusal). */
export function bouncedEvent(email: ClaimedEmail, error: string): OutcomeEvent | null {
  if (!email.contactId) return null;
  const data = { ...eventData(email), error: error.slice(0, 500) };
  return { projectId: email.projectId, event: { contactId: email.contactId, name: EMAIL_EVENT.bounced, data } };
}

/** The `email.suppressed` event of an email to a contact whose address is on the suppression list. */
export function suppressedEvent(email: ClaimedEmail, reason: string): OutcomeEvent | null {
  if (!email.contactId) return null;
  const data = { ...eventData(email), reason };
  return { projectId: email.projectId, event: { contactId: email.contactId, name: EMAIL_EVENT.suppressed, data } };
}

/** An email a bounce or complaint report names: what its events need. */
export interface ReportedEmail {
  id: string;
  projectId: string;
  contactId: string | null;
  campaignId: string | null;
}

/** `email.bounced` (an asynchronous DSN) or `email.complained` (an ARF report) of a reported email. */
export function reportEvent(email: ReportedEmail, name: 'bounced' | 'complained', detail: string): OutcomeEvent | null {
  if (!email.contactId) return null;
  const data = { ...eventData(email), ...(name === 'bounced' ? { error: detail.slice(0, 500) } : { feedbackType: detail.slice(0, 100) }) };
  return { projectId: email.projectId, event: { contactId: email.contactId, name: EMAIL_EVENT[name], data } };
}

function eventData(email: Pick<ClaimedEmail, 'id' | 'campaignId'>): Record<string, string> {
  return { emailId: email.id, ...(email.campaignId ? { campaignId: email.campaignId } : {}) };
}

/**
 * An email's outcome and the contact event it makes (`email.sent`, `email.bounced`) commit in one
 * transaction, with the workflows the event starts (their trigger reads through the same transaction):
 * a crash between the two can no longer keep the outcome and lose the event. If the event itself is
 * refused (tried twice), the outcome is still written, alone, and the loss logged: an outcome that
 * never commits would leave the row SENDING, and its lapsed claim would send the message a second time.
 */
@Injectable()
export class EmailOutcomeEvents {
  private readonly logger = new Logger(EmailOutcomeEvents.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EngagementEventsService,
  ) {}

  /** The events, of any projects, in the caller's transaction (one statement per project). */
  async record(tx: Db, events: readonly OutcomeEvent[]): Promise<void> {
    const byProject = new Map<string, SystemEvent[]>();
    for (const { projectId, event } of events) byProject.set(projectId, [...(byProject.get(projectId) ?? []), event]);
    // In project order: the workflow starts they cause take advisory locks (the run cap) in one global
    // order, so two batches holding events of the same projects cannot wait for each other.
    const projects = [...byProject.keys()].sort();
    for (const projectId of projects) await this.events.record(tx, projectScope(projectId), byProject.get(projectId)!);
  }

  /**
   * `write` records the outcome (true when this call changed the row); `event` is recorded with it
   * when it did. Answers what `write` answered.
   */
  async withEvent(scope: ProjectScope, write: (db: Db) => Promise<boolean>, event: OutcomeEvent | null): Promise<boolean> {
    if (!event) return write(this.dataSource);
    let lastError: unknown;
    for (let attempt = 0; attempt < ATOMIC_TRIES; attempt += 1) {
      try {
        return await this.dataSource.transaction(async (tx) => {
          const changed = await write(tx);
          if (changed) await this.record(tx, [event]);
          return changed;
        });
      } catch (err) {
        lastError = err;
      }
    }
    const changed = await write(this.dataSource);
    if (changed) {
      this.logger.error(
        { projectId: scope.projectId, emailId: event.event.data.emailId, event: event.event.name, err: (lastError as Error).message },
        'recording an email event failed; the outcome was recorded without it',
      );
    }
    return changed;
  }
}
