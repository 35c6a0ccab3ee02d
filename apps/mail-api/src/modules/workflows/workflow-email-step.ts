import { Inject, Injectable } from '@nestjs/common';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { EmailDeliveryRepository } from '../delivery/email-delivery.repository.js';
import { unverifiedSendersAllowed } from '../delivery/unsigned-delivery.js';
import { domainOfAddress } from '../domains/domain-name.js';
import { DomainsService } from '../domains/domains.service.js';
import { MAX_BODY_BYTES, MAX_RENDERED_SUBJECT_LENGTH } from '../send/send-message.js';
import { renderedSize, renderTemplate } from '../templates/template-rendering.js';
import { UnsubscribeLinks } from '../unsubscribe/unsubscribe-links.js';
import type { SendEmailStep } from './workflow-definition.js';
import type { StepContextRow } from './workflow-steps.repository.js';
import { WorkflowsRepository } from './workflows.repository.js';

export type EmailStepOutcome =
  { status: 'COMPLETED'; emailId: string } | { status: 'SKIPPED'; reason: string } | { status: 'FAILED'; error: string };

/**
 * A SEND_EMAIL step inside its transaction: renders the template for the contact, like POST /v1/send
 * and campaigns do (`{{email}}`, `{{unsubscribeUrl}}`, each key of the contact's data as `{{key}}` and
 * `{{data.key}}`, the trigger event's data as `{{event.key}}`), and writes the QUEUED email row that
 * commits with the step. The caller enqueues it after commit, at workflow priority. A MARKETING
 * template to an unsubscribed contact is SKIPPED; a deleted template, a template without a from
 * address or one whose domain is not verified fails the step.
 */
@Injectable()
export class WorkflowEmailStep {
  constructor(
    private readonly workflows: WorkflowsRepository,
    private readonly emails: EmailDeliveryRepository,
    private readonly domains: DomainsService,
    private readonly links: UnsubscribeLinks,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async write(tx: Db, scope: ProjectScope, ctx: StepContextRow, step: SendEmailStep): Promise<EmailStepOutcome> {
    const template = await this.workflows.templateForSend(tx, scope, step.config.templateId);
    if (!template) return { status: 'FAILED', error: `template ${step.config.templateId} no longer exists` };
    if (!template.from_email) return { status: 'FAILED', error: `template ${template.id} has no from address` };
    if (ctx.contact_email === null) return { status: 'FAILED', error: 'the contact no longer exists' };
    if (template.type === 'MARKETING' && ctx.contact_subscribed === false) return { status: 'SKIPPED', reason: 'contact unsubscribed' };
    if (!(await this.senderAllowed(scope, template.from_email))) {
      return { status: 'FAILED', error: `sender domain of ${template.from_email} is not verified` };
    }
    const data = ctx.contact_data ?? {};
    const variables: Record<string, unknown> = {
      ...data,
      data,
      event: ctx.trigger_data ?? {},
      email: ctx.contact_email,
      unsubscribeUrl: this.links.urlFor(scope.projectId, ctx.contact_id),
    };
    const htmlSize = renderedSize(template.body, variables, { escapeHtml: true, unit: 'utf8', limit: MAX_BODY_BYTES });
    const subjectSize = renderedSize(template.subject, variables, { escapeHtml: false, unit: 'utf16', limit: MAX_RENDERED_SUBJECT_LENGTH });
    if (htmlSize > MAX_BODY_BYTES || subjectSize > MAX_RENDERED_SUBJECT_LENGTH) {
      return { status: 'FAILED', error: 'the rendered email is larger than the template limits (512 KB body, 998-character subject)' };
    }
    const emailId = await this.emails.insertWorkflowEmail(tx, scope, {
      workflowId: ctx.workflow_id,
      executionId: ctx.execution_id,
      stepSeq: ctx.seq,
      fields: {
        from: { email: template.from_email, name: template.from_name },
        replyTo: template.reply_to,
        type: template.type,
        templateId: template.id,
      },
      email: {
        contactId: ctx.contact_id,
        to: { email: ctx.contact_email, name: null },
        // A substituted value must not start a new header line.
        subject: renderTemplate(template.subject, variables, { escapeHtml: false }).replace(/[\r\n]+/g, ' '),
        html: renderTemplate(template.body, variables, { escapeHtml: true }),
      },
    });
    return { status: 'COMPLETED', emailId };
  }

  /** The development outbox takes any sender (unsigned-delivery.ts); otherwise the domain must be VERIFIED. */
  private async senderAllowed(scope: ProjectScope, from: string): Promise<boolean> {
    if (unverifiedSendersAllowed(this.config)) return true;
    const domain = domainOfAddress(from);
    return domain !== null && (await this.domains.dkimForDomain(scope, domain)) !== null;
  }
}
