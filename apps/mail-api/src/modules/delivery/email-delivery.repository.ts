import { Inject, Injectable } from '@nestjs/common';
import type { MailTemplateType } from '@app/contracts';
import { query, queryPrepared, type Db } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
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

/**
 * The one writer of `emails`: the QUEUED rows of a send (in the send's transaction), then the claim and
 * the outcome of each delivery. Every statement on one email is scoped to its project. Named prepared
 * statements: each email costs a claim and an outcome, the worker's hot path.
 */
@Injectable()
export class EmailDeliveryRepository {
  private readonly dkimKeys: DkimKeyCipher;

  constructor(@Inject(MAIL_CONFIG) config: MailConfig) {
    this.dkimKeys = new DkimKeyCipher(config);
  }

  /** One QUEUED row per recipient, in one statement. Returns email ids by lower-cased recipient address. */
  async insertQueued(
    tx: Db,
    scope: ProjectScope,
    input: { fields: EmailMessageFields; emails: EmailToInsert[] },
  ): Promise<Map<string, string>> {
    const { fields, emails } = input;
    const rows = await queryPrepared<{ id: string; to_email: string }>(
      tx,
      `INSERT INTO emails (project_id, send_request_id, contact_id, template_id, type, to_email, to_name,
                           from_email, from_name, reply_to, subject, html, headers)
       SELECT $1, $2, r.contact_id, $3, $4, r.to_email, r.to_name, $5, $6, $7, r.subject, r.html, $8
         FROM unnest($9::uuid[], $10::text[], $11::text[], $12::text[], $13::text[]) WITH ORDINALITY
              AS r(contact_id, to_email, to_name, subject, html, ord)
        ORDER BY r.ord
       RETURNING id, lower(to_email) AS to_email`,
      [
        scope.projectId,
        fields.sendRequestId,
        fields.templateId,
        fields.type,
        fields.from.email,
        fields.from.name,
        fields.replyTo,
        JSON.stringify(fields.headers),
        emails.map((e) => e.contactId),
        emails.map((e) => e.to.email),
        emails.map((e) => e.to.name),
        emails.map((e) => e.subject),
        emails.map((e) => e.html),
      ],
    );
    return new Map(rows.map((r) => [r.to_email, r.id]));
  }

  /** The DKIM key is decrypted here, just before signing: it is stored sealed (DkimKeyCipher). */
  async claim(db: Db, scope: ProjectScope, input: { emailId: string; lockSeconds: number }): Promise<ClaimedEmail | null> {
    const [row] = await queryPrepared<ClaimRow>(db, CLAIM, [input.emailId, scope.projectId, input.lockSeconds]);
    if (!row) return null;
    const { dkimDomain, dkimSelector, dkimPrivateKey, ...email } = row;
    const dkim =
      dkimDomain && dkimSelector && dkimPrivateKey
        ? {
            domainName: dkimDomain,
            keySelector: dkimSelector,
            privateKey: this.dkimKeys.open(dkimPrivateKey, { projectId: scope.projectId, domain: dkimDomain }),
          }
        : null;
    return { ...email, dkim };
  }

  /** Why a claim found nothing: the row's state now (null: no such email in that project). */
  async state(db: Db, scope: ProjectScope, emailId: string): Promise<{ status: string; claimedUntil: Date | null } | null> {
    const [row] = await queryPrepared<{ status: string; claimedUntil: Date | null }>(
      db,
      `SELECT status, claimed_until AS "claimedUntil" FROM emails WHERE id = $1 AND project_id = $2`,
      [emailId, scope.projectId],
    );
    return row ?? null;
  }

  /**
   * Not fenced by `attempts`: the message went out, so SENT is the truth even if our claim had lapsed
   * and another worker holds the row now (or recorded a failure).
   */
  async markSent(db: Db, scope: ProjectScope, input: { email: ClaimedEmail; providerMessageId: string }): Promise<void> {
    await queryPrepared(
      db,
      `UPDATE emails SET status = 'SENT', sent_at = now(), provider_message_id = $3, claimed_until = NULL, error = NULL, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status <> 'SENT'`,
      [input.email.id, scope.projectId, input.providerMessageId],
    );
  }

  /** Pushes a live claim forward (a send that outlasts half the lock); false when the claim was lost. */
  async extendClaim(db: Db, scope: ProjectScope, input: { email: ClaimedEmail; lockSeconds: number }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE emails SET claimed_until = now() + make_interval(secs => $3)
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4 RETURNING 1`,
      [input.email.id, scope.projectId, input.lockSeconds, input.email.attempts],
    );
    return rows.length > 0;
  }

  /** Fenced: a worker whose claim lapsed and was taken over must not overwrite the newer outcome. */
  async markFailed(db: Db, scope: ProjectScope, input: { email: ClaimedEmail; error: string }): Promise<void> {
    await queryPrepared(
      db,
      `UPDATE emails SET status = 'FAILED', failed_at = now(), error = $3, claimed_until = NULL, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4`,
      [input.email.id, scope.projectId, input.error.slice(0, 1000), input.email.attempts],
    );
  }

  /** Gives the row back for a retry (the job's backoff decides when), keeping the reason. */
  async release(db: Db, scope: ProjectScope, input: { email: ClaimedEmail; error: string }): Promise<void> {
    await queryPrepared(
      db,
      `UPDATE emails SET status = 'QUEUED', claimed_until = NULL, error = $3, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4`,
      [input.email.id, scope.projectId, input.error.slice(0, 1000), input.email.attempts],
    );
  }

  /**
   * A page of the emails that should have a job: QUEUED for over a minute (their job may have been
   * lost with Redis) and SENDING with a lapsed claim (their worker died), keyset-paged by
   * (queued_at, id) on the partial index of unfinished emails. A sweep over every project: no scope.
   */
  unfinished(db: Db, input: { after: { queuedAt: string; id: string } | null; limit: number }): Promise<UnfinishedEmail[]> {
    return query<UnfinishedEmail>(
      db,
      `SELECT id, project_id AS "projectId", type, campaign_id AS "campaignId", queued_at::text AS "queuedAt"
         FROM emails
        WHERE status IN ('QUEUED', 'SENDING')
          AND (queued_at, id) > ($1::timestamptz, $2::uuid)
          AND ((status = 'QUEUED' AND queued_at < now() - interval '1 minute') OR (status = 'SENDING' AND claimed_until < now()))
        ORDER BY queued_at, id
        LIMIT $3`,
      [input.after?.queuedAt ?? '-infinity', input.after?.id ?? '00000000-0000-0000-0000-000000000000', input.limit],
    );
  }
}
