import { Inject, Injectable } from '@nestjs/common';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { Sql } from '../../core/database/sql.service.js';
import { DkimKeyCipher } from '../domains/dkim-key-cipher.js';

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
}

export interface UnfinishedEmail {
  id: string;
  projectId: string;
  type: 'TRANSACTIONAL' | 'MARKETING';
  campaignId: string | null;
  /** Text, not a Date: the keyset needs Postgres's microseconds, which a JS Date would cut. */
  queuedAt: string;
}

/**
 * One statement claims the row and reads everything the message needs: the claim is the whole
 * exactly-once gate (see EmailDeliveryJobs), so it must be atomic, and one round trip per email keeps
 * the pipeline's database cost at two statements per email (claim, then the outcome).
 */
const CLAIM = `
  WITH claimed AS (
    UPDATE emails
       SET status = 'SENDING', attempts = attempts + 1, claimed_until = now() + make_interval(secs => $3), updated_at = now()
     WHERE id = $1 AND project_id = $2
       AND (status = 'QUEUED' OR (status = 'SENDING' AND claimed_until < now()))
    RETURNING id, project_id, send_request_id, contact_id, type, to_email, to_name, from_email, from_name, reply_to,
              subject, html, headers, attempts
  )
  SELECT c.id, c.project_id AS "projectId", c.contact_id AS "contactId", c.type, c.to_email AS "toEmail",
         c.to_name AS "toName", c.from_email AS "fromEmail", c.from_name AS "fromName", c.reply_to AS "replyTo",
         c.subject, c.html, c.headers, c.attempts, COALESCE(r.attachments, '[]'::jsonb) AS attachments,
         d.domain AS "dkimDomain", d.dkim_selector AS "dkimSelector", d.dkim_private_key AS "dkimPrivateKey",
         ct.subscribed AS "contactSubscribed"
    FROM claimed c
    LEFT JOIN domains d
      ON d.project_id = c.project_id AND d.domain = lower(substring(c.from_email FROM '@([^@]+)$')) AND d.status = 'VERIFIED'
    LEFT JOIN send_requests r ON r.id = c.send_request_id AND r.project_id = c.project_id
    LEFT JOIN contacts ct ON ct.id = c.contact_id AND ct.project_id = c.project_id`;

type ClaimRow = Omit<ClaimedEmail, 'dkim'> & { dkimDomain: string | null; dkimSelector: string | null; dkimPrivateKey: string | null };

@Injectable()
export class EmailDeliveryRepository {
  private readonly dkimKeys: DkimKeyCipher;

  constructor(
    private readonly sql: Sql,
    @Inject(MAIL_CONFIG) config: MailConfig,
  ) {
    this.dkimKeys = new DkimKeyCipher(config);
  }

  /** The DKIM key is decrypted here, just before signing: it is stored sealed (DkimKeyCipher). */
  async claim(emailId: string, projectId: string, lockSeconds: number): Promise<ClaimedEmail | null> {
    const [row] = await this.sql.query<ClaimRow>(CLAIM, [emailId, projectId, lockSeconds]);
    if (!row) return null;
    const { dkimDomain, dkimSelector, dkimPrivateKey, ...email } = row;
    const dkim =
      dkimDomain && dkimSelector && dkimPrivateKey
        ? {
            domainName: dkimDomain,
            keySelector: dkimSelector,
            privateKey: this.dkimKeys.open(dkimPrivateKey, { projectId, domain: dkimDomain }),
          }
        : null;
    return { ...email, dkim };
  }

  /** Why a claim found nothing: the row's state now (null: no such email in that project). */
  async state(emailId: string, projectId: string): Promise<{ status: string; claimedUntil: Date | null } | null> {
    const [row] = await this.sql.query<{ status: string; claimedUntil: Date | null }>(
      `SELECT status, claimed_until AS "claimedUntil" FROM emails WHERE id = $1 AND project_id = $2`,
      [emailId, projectId],
    );
    return row ?? null;
  }

  /**
   * Not fenced by `attempts`: the message went out, so SENT is the truth even if our claim had lapsed
   * and another worker holds the row now (or recorded a failure).
   */
  async markSent(email: ClaimedEmail, providerMessageId: string): Promise<void> {
    await this.sql.query(
      `UPDATE emails SET status = 'SENT', sent_at = now(), provider_message_id = $3, claimed_until = NULL, error = NULL, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status <> 'SENT'`,
      [email.id, email.projectId, providerMessageId],
    );
  }

  /** Pushes a live claim forward (a send that outlasts half the lock); false when the claim was lost. */
  async extendClaim(email: ClaimedEmail, lockSeconds: number): Promise<boolean> {
    const rows = await this.sql.query(
      `UPDATE emails SET claimed_until = now() + make_interval(secs => $3)
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4 RETURNING 1`,
      [email.id, email.projectId, lockSeconds, email.attempts],
    );
    return rows.length > 0;
  }

  /** Fenced: a worker whose claim lapsed and was taken over must not overwrite the newer outcome. */
  async markFailed(email: ClaimedEmail, error: string): Promise<void> {
    await this.sql.query(
      `UPDATE emails SET status = 'FAILED', failed_at = now(), error = $3, claimed_until = NULL, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4`,
      [email.id, email.projectId, error.slice(0, 1000), email.attempts],
    );
  }

  /** Gives the row back for a retry (the job's backoff decides when), keeping the reason. */
  async release(email: ClaimedEmail, error: string): Promise<void> {
    await this.sql.query(
      `UPDATE emails SET status = 'QUEUED', claimed_until = NULL, error = $3, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4`,
      [email.id, email.projectId, error.slice(0, 1000), email.attempts],
    );
  }

  /**
   * A page of the emails that should have a job: QUEUED for over a minute (their job may have been
   * lost with Redis) and SENDING with a lapsed claim (their worker died), keyset-paged by
   * (queued_at, id) on the partial index of unfinished emails.
   */
  unfinished(after: { queuedAt: string; id: string } | null, limit: number): Promise<UnfinishedEmail[]> {
    return this.sql.query<UnfinishedEmail>(
      `SELECT id, project_id AS "projectId", type, campaign_id AS "campaignId", queued_at::text AS "queuedAt"
         FROM emails
        WHERE status IN ('QUEUED', 'SENDING')
          AND (queued_at, id) > ($1::timestamptz, $2::uuid)
          AND ((status = 'QUEUED' AND queued_at < now() - interval '1 minute') OR (status = 'SENDING' AND claimed_until < now()))
        ORDER BY queued_at, id
        LIMIT $3`,
      [after?.queuedAt ?? '-infinity', after?.id ?? '00000000-0000-0000-0000-000000000000', limit],
    );
  }
}
