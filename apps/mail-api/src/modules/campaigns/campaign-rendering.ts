import type { ContactDataPrimitive } from '@app/contracts';
import { MAX_BODY_BYTES, MAX_RENDERED_SUBJECT_LENGTH } from '../send/send-message.js';
import { renderedSize, renderTemplate } from '../templates/template-rendering.js';

export interface RenderedEmail {
  subject: string;
  html: string;
}

/**
 * A campaign email's placeholders for one contact (decisions.md "Mail"): every key of the contact's
 * data as `{{key}}` and `{{data.key}}`, then `{{email}}` and `{{unsubscribeUrl}}` (which data keys of
 * the same name cannot override).
 */
export function campaignVariables(
  contact: { email: string; data: Record<string, ContactDataPrimitive> | null },
  unsubscribeUrl: string,
): Record<string, unknown> {
  const data = contact.data ?? {};
  return { ...data, data, email: contact.email, unsubscribeUrl };
}

/**
 * Subject and body rendered for one recipient, or why not: placeholders multiply (512 KB of `{{x}}`
 * with a 10 KB `x` would be gigabytes), so the rendered sizes are measured first (without building
 * them) against the caps of /v1/send.
 */
export function renderCampaignEmail(
  campaign: { subject: string; body: string },
  variables: Record<string, unknown>,
): RenderedEmail | { problem: string } {
  const subjectSize = renderedSize(campaign.subject, variables, {
    escapeHtml: false,
    unit: 'utf16',
    limit: MAX_RENDERED_SUBJECT_LENGTH,
  });
  if (subjectSize > MAX_RENDERED_SUBJECT_LENGTH)
    return { problem: `subject renders to more than ${MAX_RENDERED_SUBJECT_LENGTH} characters` };
  if (renderedSize(campaign.body, variables, { escapeHtml: true, unit: 'utf8', limit: MAX_BODY_BYTES }) > MAX_BODY_BYTES) {
    return { problem: `body renders to more than ${MAX_BODY_BYTES} bytes` };
  }
  return {
    // A substituted value must not start a new header line.
    subject: renderTemplate(campaign.subject, variables, { escapeHtml: false }).replace(/[\r\n]+/g, ' '),
    html: renderTemplate(campaign.body, variables, { escapeHtml: true }),
  };
}
