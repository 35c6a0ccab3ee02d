import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Db } from '@app/service-kit';
import { projectScope } from '../../core/scope/project-scope.js';
import { ContactsRepository } from '../contacts/contacts.repository.js';
import { EmailDeliveryRepository } from '../delivery/email-delivery.repository.js';
import { EmailReadsRepository } from '../delivery/email-reads.repository.js';
import { EmailOutcomeEvents, reportEvent } from '../delivery/email-outcome-events.js';
import { SuppressionsRepository } from '../suppressions/suppressions.repository.js';
import type { DeliveryReport } from './delivery-reports.js';

export type ReportOutcome = 'bounced' | 'complained' | 'duplicate' | 'ignored' | 'unknown-email';

/**
 * Applies a bounce or complaint report to the email its VERP address names (decisions.md
 * "Deliverability"), each in one transaction with its contact event:
 * - hard bounce (DSN, 5.x.x failed): SENT → BOUNCED, `email.bounced`, HARD_BOUNCE (source `dsn`);
 * - complaint (ARF abuse): `complained_at`, `email.complained`, the contact unsubscribed, COMPLAINT
 *   (source `arf`).
 * The email's own state makes a repeated report a no-op (markBounced / markComplained change a row
 * once), so the same report delivered twice is processed once.
 */
@Injectable()
export class DeliveryReportsService {
  private readonly logger = new Logger(DeliveryReportsService.name);

  constructor(
    private readonly emails: EmailDeliveryRepository,
    private readonly emailReads: EmailReadsRepository,
    private readonly outcomes: EmailOutcomeEvents,
    private readonly suppressions: SuppressionsRepository,
    private readonly contacts: ContactsRepository,
    private readonly dataSource: DataSource,
  ) {}

  async apply(emailId: string, report: DeliveryReport): Promise<ReportOutcome> {
    if (report.kind === 'ignored') return 'ignored';
    const email = await this.emailReads.reported(this.dataSource, emailId);
    if (!email) return 'unknown-email';
    const scope = projectScope(email.projectId);
    let changed: boolean;
    if (report.kind === 'hard-bounce') {
      const write = async (db: Db) => {
        const done = await this.emails.markBounced(db, scope, { emailId, error: `DSN ${report.detail}` });
        if (done)
          await this.suppressions.insert(db, scope, { email: email.toEmail, reason: 'HARD_BOUNCE', source: 'dsn', detail: report.detail });
        return done;
      };
      changed = await this.outcomes.withEvent(scope, write, reportEvent(email, 'bounced', `DSN ${report.detail}`));
    } else {
      const write = async (db: Db) => {
        const done = await this.emails.markComplained(db, scope, { emailId });
        if (done) {
          if (email.contactId) await this.contacts.unsubscribe(db, scope, email.contactId);
          await this.suppressions.insert(db, scope, { email: email.toEmail, reason: 'COMPLAINT', source: 'arf', detail: report.detail });
        }
        return done;
      };
      changed = await this.outcomes.withEvent(scope, write, reportEvent(email, 'complained', 'abuse'));
    }
    const outcome: ReportOutcome = !changed ? 'duplicate' : report.kind === 'hard-bounce' ? 'bounced' : 'complained';
    this.logger.log({ emailId, projectId: email.projectId, outcome }, 'delivery report processed');
    return outcome;
  }
}
