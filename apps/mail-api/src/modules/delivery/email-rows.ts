import type { MailTemplateType } from '@app/contracts';

/**
 * The shapes of `emails` rows EmailDeliveryRepository writes and claims: what a send inserts and
 * what a claim holds (with what sending needs).
 */

export interface EmailAttachment {
  filename: string;
  /** base64 */
  content: string;
  contentType?: string | null;
}

/** An email row this worker holds the claim of, with what sending it needs (DKIM key, attachments). */
export interface ClaimedEmail {
  id: string;
  projectId: string;
  contactId: string | null;
  /** The campaign the email belongs to (its `email.sent` event, the campaign's completion), or null. */
  campaignId: string | null;
  /** The workflow whose execution wrote the email (its `email.sent` event), or null. */
  workflowId: string | null;
  type: 'TRANSACTIONAL' | 'MARKETING';
  toEmail: string;
  toName: string | null;
  fromEmail: string;
  fromName: string | null;
  replyTo: string | null;
  subject: string;
  html: string;
  headers: Record<string, string>;
  /** Claims so far, this one included: the fence of the status updates below. */
  attempts: number;
  attachments: EmailAttachment[];
  /** The VERIFIED domain of the from address; null when there is none (nothing may be sent). */
  dkim: { domainName: string; keySelector: string; privateKey: string } | null;
  /** The contact's current `subscribed`; null when the email has no (remaining) contact. */
  contactSubscribed: boolean | null;
  /** The reason the recipient is on the project's suppression list (read by the claim), or null. */
  suppressedReason: string | null;
  /** Temporary refusals (SMTP 4xx) before this claim: the position in MAIL_SOFT_BOUNCE_DELAYS_MS. */
  softBounces: number;
}

export interface EmailAddress {
  email: string;
  name: string | null;
}

/** What every email of one send shares. */
export interface EmailMessageFields {
  from: EmailAddress;
  replyTo: string | null;
  headers: Record<string, string>;
  type: MailTemplateType;
  templateId: string | null;
  sendRequestId: string | null;
}

/** One recipient's email, rendered. */
export interface EmailToInsert {
  contactId: string;
  to: EmailAddress;
  subject: string;
  html: string;
}

/** An email an open or click is recorded for, locked, with what it recorded before. */
