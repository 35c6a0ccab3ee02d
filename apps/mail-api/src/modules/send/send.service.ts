import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { ErrorCode, MailErrorCode, type FieldError, type MailSendResult } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { scopeOf, type ProjectScope } from '../../core/scope/project-scope.js';
import { ContactsRepository } from '../contacts/contacts.repository.js';
import { EmailDeliveryQueue, MailEmailPriority } from '../delivery/email-delivery.queue.js';
import { EmailDeliveryRepository } from '../delivery/email-delivery.repository.js';
import type { EmailAddress, EmailToInsert } from '../delivery/email-rows.js';
import { unverifiedSendersAllowed } from '../delivery/unsigned-delivery.js';
import { DomainsService } from '../domains/domains.service.js';
import { renderTemplate } from '../templates/template-rendering.js';
import { TemplatesService } from '../templates/templates.service.js';
import { UnsubscribeLinks } from '../unsubscribe/unsubscribe-links.js';
import { renderedSizeProblems, resolveMessage, type ResolvedMessage } from './send-message.js';
import type { SendEmailBody } from './send.dto.js';
import { SendRepository } from './send.repository.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

function validationError(problems: FieldError[]): DomainError {
  return new DomainError(ErrorCode.ValidationError, `validation failed: ${problems.map((p) => p.message).join('; ')}`, {
    status: 422,
    details: problems,
  });
}

/**
 * POST /v1/send: resolves the message (template overlay, sender domain), then in one transaction
 * takes the Idempotency-Key, upserts the recipients' contacts, checks every recipient's rendered
 * size (the caps in send-message.ts) and writes one QUEUED email per recipient; after commit the
 * emails are queued for the worker. Postgres is the source of truth: if the enqueue fails, the
 * worker's requeue job picks the QUEUED rows up.
 */
@Injectable()
export class SendService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: SendRepository,
    private readonly contacts: ContactsRepository,
    private readonly emails: EmailDeliveryRepository,
    private readonly templates: TemplatesService,
    private readonly domains: DomainsService,
    private readonly unsubscribeLinks: UnsubscribeLinks,
    private readonly deliveryQueue: EmailDeliveryQueue,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async send(project: ProjectContext, body: SendEmailBody, idempotencyKey: string | undefined): Promise<MailSendResult> {
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw validationError([
        { field: 'Idempotency-Key', code: 'isIdempotencyKey', message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' },
      ]);
    }
    const template = body.template ? await this.templates.findById(project, body.template) : null;
    const problems: FieldError[] = [];
    const message = resolveMessage(body, template, problems);
    if (!message) throw validationError(problems);
    // The development outbox takes any sender (unsigned, marked so by the worker): unsigned-delivery.ts.
    if (!unverifiedSendersAllowed(this.config)) await this.domains.assertVerifiedSender(project, message.from.email);

    const scope = scopeOf(project);
    // Only a keyed send compares bodies: without a key, no serialization and hash of a body that may
    // carry up to 16 MB of attachments.
    const requestHash = idempotencyKey === undefined ? null : createHash('sha256').update(JSON.stringify(body)).digest('hex');
    const outcome = await this.dataSource.transaction(async (tx) => {
      if (idempotencyKey !== undefined && requestHash !== null) {
        const earlier = await this.repository.claimIdempotencyKey(tx, scope, { key: idempotencyKey, requestHash });
        if (earlier) return { replay: this.replay(earlier.request_hash, requestHash, earlier.response), written: null };
      }
      const written = await this.write(tx, scope, message, body);
      if (idempotencyKey !== undefined)
        await this.repository.storeIdempotentResponse(tx, scope, { key: idempotencyKey, response: written.result });
      return { replay: null, written };
    });
    if (!outcome.written) return outcome.replay;
    await this.enqueue(scope, outcome.written.emailIds);
    return outcome.written.result;
  }

  /**
   * One transactional email to an address that is no contact (a campaign's test send): its QUEUED row
   * and its job as /v1/send writes them, without a contact or an Idempotency-Key. The caller has
   * checked the sender and rendered the subject and body. Returns the email's id.
   */
  async sendToAddress(
    scope: ProjectScope,
    input: { from: EmailAddress; replyTo: string | null; to: EmailAddress; subject: string; html: string },
  ): Promise<string> {
    const { from, replyTo, to, subject, html } = input;
    const ids = await this.dataSource.transaction((tx) =>
      this.emails.insertQueued(tx, scope, {
        fields: { from, replyTo, headers: {}, type: 'TRANSACTIONAL', templateId: null, sendRequestId: null },
        emails: [{ contactId: null, to, subject, html }],
      }),
    );
    const emailId = [...ids.values()][0];
    await this.enqueue(scope, [emailId]);
    return emailId;
  }

  private replay(storedHash: string, requestHash: string, response: MailSendResult): MailSendResult {
    if (storedHash !== requestHash) {
      throw new DomainError(MailErrorCode.IdempotencyConflict, 'this Idempotency-Key was used with a different request body', {
        status: 409,
        suggestion: 'Use a new Idempotency-Key for a different request.',
      });
    }
    return response;
  }

  private async write(tx: EntityManager, scope: ProjectScope, message: ResolvedMessage, body: SendEmailBody) {
    const emails = message.recipients.map((r) => r.email);
    const contactIds = await this.contacts.upsertRecipients(tx, scope, { emails, subscribed: body.subscribed ?? null });
    // The signed link (an HMAC per recipient) only when subject or body can refer to it: a placeholder
    // naming it contains the word, so a message without the word renders the same without it.
    const linked = message.subject.includes('unsubscribeUrl') || message.body.includes('unsubscribeUrl');
    const recipients = message.recipients.map((to) => {
      const contactId = contactIds.get(to.email.toLowerCase()) as string;
      const variables: Record<string, unknown> = { ...body.data, email: to.email };
      if (linked) variables.unsubscribeUrl = this.unsubscribeLinks.urlFor(scope.projectId, contactId);
      return { to, contactId, email: to.email, variables };
    });
    // Measured (the variables need the contact ids) before anything is rendered or stored; the refusal
    // rolls the contacts and the Idempotency-Key back with the transaction.
    const oversized = renderedSizeProblems(message.subject, message.body, recipients);
    if (oversized.length > 0) throw validationError(oversized);
    const sendRequestId = message.attachments.length > 0 ? await this.repository.insertSendRequest(tx, scope, message.attachments) : null;
    const rendered: EmailToInsert[] = recipients.map(({ to, contactId, variables }) => ({
      contactId,
      to,
      // A substituted value must not start a new header line.
      subject: renderTemplate(message.subject, variables, { escapeHtml: false }).replace(/[\r\n]+/g, ' '),
      html: renderTemplate(message.body, variables, { escapeHtml: true }),
    }));
    const emailIds = await this.emails.insertQueued(tx, scope, { fields: { ...message, sendRequestId }, emails: rendered });
    const result: MailSendResult = {
      emails: rendered.map((e) => ({
        contact: { id: e.contactId, email: e.to.email },
        email: emailIds.get(e.to.email.toLowerCase()) as string,
      })),
      timestamp: new Date().toISOString(),
    };
    return { result, emailIds: [...emailIds.values()] };
  }

  /** After commit, at transactional priority (first in the queue); a failed add is left to the requeue sweep. */
  private async enqueue(scope: ProjectScope, emailIds: string[]): Promise<void> {
    await this.deliveryQueue.enqueueOrLeaveToSweep(scope, { emailIds, priority: MailEmailPriority.Transactional });
  }
}
