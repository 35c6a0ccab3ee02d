import { Inject, Injectable } from '@nestjs/common';
import { query, queryOne, queryPrepared, type Db } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { DkimKeyCipher } from '../domains/dkim-key-cipher.js';
import type { ClaimedEmail, EmailAddress, EmailMessageFields, EmailToInsert } from './email-rows.js';

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
    RETURNING id, project_id, send_request_id, contact_id, campaign_id, workflow_id, type, to_email, to_name, from_email, from_name, reply_to,
              subject, html, headers, attempts, soft_bounces
  )
  SELECT c.id, c.project_id AS "projectId", c.contact_id AS "contactId", c.campaign_id AS "campaignId", c.workflow_id AS "workflowId",
         c.type, c.to_email AS "toEmail",
         c.to_name AS "toName", c.from_email AS "fromEmail", c.from_name AS "fromName", c.reply_to AS "replyTo",
         c.subject, c.html, c.headers, c.attempts, c.soft_bounces AS "softBounces", COALESCE(r.attachments, '[]'::jsonb) AS attachments,
         d.domain AS "dkimDomain", d.dkim_selector AS "dkimSelector", d.dkim_private_key AS "dkimPrivateKey",
         ct.subscribed AS "contactSubscribed", sup.reason AS "suppressedReason"
    FROM claimed c
    LEFT JOIN domains d
      ON d.project_id = c.project_id AND d.domain = lower(substring(c.from_email FROM '@([^@]+)$')) AND d.status = 'VERIFIED'
    LEFT JOIN send_requests r ON r.id = c.send_request_id AND r.project_id = c.project_id
    LEFT JOIN contacts ct ON ct.id = c.contact_id AND ct.project_id = c.project_id
    LEFT JOIN LATERAL (
      SELECT s.reason FROM suppressions s WHERE s.project_id = c.project_id AND lower(s.email) = lower(c.to_email) LIMIT 1
    ) sup ON true`;

type ClaimRow = Omit<ClaimedEmail, 'dkim'> & { dkimDomain: string | null; dkimSelector: string | null; dkimPrivateKey: string | null };

/** CLAIM over many emails at once (EmailDeliveryBatcher): the same statement, for the (id, project) pairs of $1, $2. */
const CLAIM_MANY = CLAIM.replace(
  'WHERE id = $1 AND project_id = $2',
  'WHERE (id, project_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))',
);
if (CLAIM_MANY === CLAIM) throw new Error('CLAIM_MANY: CLAIM no longer selects its email by `id = $1 AND project_id = $2`');

/**
 * The writer of `emails`: the QUEUED rows of a send (in the send's transaction), then the claim and
 * the outcome of each delivery. Two column sets have writers of their own: the feeder's `fed_at`
 * (MarketingFeedRepository) and the engagement marks (EmailEngagementMarksRepository); the reads outside
 * a claim are EmailReadsRepository's. Every statement on one email is scoped to its project. Named
 * prepared statements: each email costs a claim and an outcome, the worker's hot path.
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
    // A null contact: an address that is no contact (a campaign's test send).
    input: { fields: EmailMessageFields; emails: (Omit<EmailToInsert, 'contactId'> & { contactId: string | null })[] },
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

  /**
   * One batch of a campaign's emails (MARKETING, QUEUED), one statement. A contact that already has
   * this campaign's email gets none (the unique (campaign_id, contact_id) index): a batch run twice
   * inserts nothing twice. Returns the rows inserted now.
   */
  insertCampaignEmails(
    tx: Db,
    scope: ProjectScope,
    input: { campaignId: string; from: EmailAddress; replyTo: string | null; emails: EmailToInsert[] },
  ): Promise<{ id: string; contactId: string }[]> {
    const { from, emails } = input;
    return query<{ id: string; contactId: string }>(
      tx,
      `INSERT INTO emails (project_id, campaign_id, contact_id, type, to_email, to_name, from_email, from_name, reply_to, subject, html)
       SELECT $1, $2, r.contact_id, 'MARKETING', r.to_email, r.to_name, $3, $4, $5, r.subject, r.html
         FROM unnest($6::uuid[], $7::text[], $8::text[], $9::text[], $10::text[]) WITH ORDINALITY
              AS r(contact_id, to_email, to_name, subject, html, ord)
        ORDER BY r.ord
       ON CONFLICT (campaign_id, contact_id) WHERE campaign_id IS NOT NULL DO NOTHING
       RETURNING id, contact_id AS "contactId"`,
      [
        scope.projectId,
        input.campaignId,
        from.email,
        from.name,
        input.replyTo,
        emails.map((e) => e.contactId),
        emails.map((e) => e.to.email),
        emails.map((e) => e.to.name),
        emails.map((e) => e.subject),
        emails.map((e) => e.html),
      ],
    );
  }

  /**
   * A cancelled campaign's unsent emails become CANCELLED, in the cancel's transaction: the claim takes
   * only QUEUED (or lapsed SENDING) rows, so none is sent afterwards. A SENDING row whose send is in
   * flight is cancelled too; if the relay accepts it, markSent records the truth (SENT). Returns their ids.
   */
  async cancelCampaignEmails(tx: Db, scope: ProjectScope, campaignId: string): Promise<string[]> {
    const rows = await query<{ id: string }>(
      tx,
      `UPDATE emails SET status = 'CANCELLED', claimed_until = NULL, updated_at = now()
        WHERE project_id = $1 AND campaign_id = $2 AND status IN ('QUEUED', 'SENDING') RETURNING id`,
      [scope.projectId, campaignId],
    );
    return rows.map((r) => r.id);
  }

  /**
   * A workflow SEND_EMAIL step's email (QUEUED), in the step's transaction. One per (execution, step
   * visit): the unique index makes a second insert of the same visit answer the first email's id. The
   * email carries its workflow: its `email.*` events never start that workflow again.
   */
  async insertWorkflowEmail(
    tx: Db,
    scope: ProjectScope,
    input: {
      workflowId: string;
      executionId: string;
      stepSeq: number;
      fields: Omit<EmailMessageFields, 'sendRequestId' | 'headers'>;
      email: EmailToInsert;
    },
  ): Promise<string> {
    const { fields, email } = input;
    const inserted = await queryOne<{ id: string }>(
      tx,
      `INSERT INTO emails (project_id, workflow_execution_id, workflow_step_seq, contact_id, template_id, type, to_email, to_name,
                           from_email, from_name, reply_to, subject, html, workflow_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (workflow_execution_id, workflow_step_seq) WHERE workflow_execution_id IS NOT NULL DO NOTHING
       RETURNING id`,
      [
        scope.projectId,
        input.executionId,
        input.stepSeq,
        email.contactId,
        fields.templateId,
        fields.type,
        email.to.email,
        email.to.name,
        fields.from.email,
        fields.from.name,
        fields.replyTo,
        email.subject,
        email.html,
        input.workflowId,
      ],
    );
    if (inserted) return inserted.id;
    const existing = await queryOne<{ id: string }>(
      tx,
      `SELECT id FROM emails WHERE project_id = $1 AND workflow_execution_id = $2 AND workflow_step_seq = $3`,
      [scope.projectId, input.executionId, input.stepSeq],
    );
    return existing!.id;
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

  /**
   * `claim` for the emails of several jobs in one statement (EmailDeliveryBatcher): each row is claimed
   * exactly as alone, and matched by id and project together (the emails may be of several projects).
   * Returns the claimed emails by id; an email missing from the map was not claimed.
   */
  async claimMany(
    db: Db,
    input: { emails: { emailId: string; projectId: string }[]; lockSeconds: number },
  ): Promise<Map<string, ClaimedEmail>> {
    const rows = await queryPrepared<ClaimRow>(db, CLAIM_MANY, [
      input.emails.map((e) => e.emailId),
      input.emails.map((e) => e.projectId),
      input.lockSeconds,
    ]);
    const claimed = new Map<string, ClaimedEmail>();
    for (const { dkimDomain, dkimSelector, dkimPrivateKey, ...email } of rows) {
      const owner = { projectId: email.projectId, domain: dkimDomain ?? '' };
      const dkim =
        dkimDomain && dkimSelector && dkimPrivateKey
          ? { domainName: dkimDomain, keySelector: dkimSelector, privateKey: this.dkimKeys.open(dkimPrivateKey, owner) }
          : null;
      claimed.set(email.id, { ...email, dkim });
    }
    return claimed;
  }

  /**
   * `markSent` for several emails in one statement (EmailDeliveryBatcher), rows taken in id order.
   * Returns the ids it changed (an email already SENT is not).
   */
  async markSentMany(db: Db, input: { emails: { emailId: string; projectId: string; providerMessageId: string }[] }): Promise<Set<string>> {
    // One row per email (the first call's, as one by one), in id order.
    const byId = new Map<string, (typeof input.emails)[number]>();
    for (const e of input.emails) if (!byId.has(e.emailId)) byId.set(e.emailId, e);
    const emails = [...byId.values()].sort((a, b) => (a.emailId < b.emailId ? -1 : 1));
    const rows = await queryPrepared<{ id: string }>(
      db,
      `UPDATE emails e
          SET status = 'SENT', sent_at = now(), provider_message_id = s.provider_message_id, claimed_until = NULL, error = NULL, updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS s(id, project_id, provider_message_id)
        WHERE e.id = s.id AND e.project_id = s.project_id AND e.status <> 'SENT'
        RETURNING e.id`,
      [emails.map((e) => e.emailId), emails.map((e) => e.projectId), emails.map((e) => e.providerMessageId)],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Not fenced by `attempts`: the message went out, so SENT is the truth even if our claim had lapsed
   * and another worker holds the row now (or recorded a failure, or its campaign was cancelled while it
   * was in flight). True when this call made it SENT (false: it already was).
   */
  async markSent(db: Db, scope: ProjectScope, input: { email: ClaimedEmail; providerMessageId: string }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE emails SET status = 'SENT', sent_at = now(), provider_message_id = $3, claimed_until = NULL, error = NULL, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status <> 'SENT' RETURNING 1`,
      [input.email.id, scope.projectId, input.providerMessageId],
    );
    return rows.length > 0;
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

  /**
   * Fenced: a worker whose claim lapsed and was taken over must not overwrite the newer outcome.
   * `bounced`: the relay refused the message for good (SMTP 5xx), counted as a bounce. True when this
   * call recorded the failure.
   */
  async markFailed(db: Db, scope: ProjectScope, input: { email: ClaimedEmail; error: string; bounced?: boolean }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE emails SET status = 'FAILED', failed_at = now(), error = $3, claimed_until = NULL, updated_at = now(),
                         bounced_at = CASE WHEN $5::boolean THEN now() END
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4 RETURNING 1`,
      [input.email.id, scope.projectId, input.error.slice(0, 1000), input.email.attempts, input.bounced ?? false],
    );
    return rows.length > 0;
  }

  /**
   * The recipient is suppressed: the email ends SUPPRESSED, never sent. Fenced like markFailed. True
   * when this call recorded it.
   */
  async markSuppressed(db: Db, scope: ProjectScope, input: { email: ClaimedEmail; reason: string }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE emails SET status = 'SUPPRESSED', failed_at = now(), error = $3, claimed_until = NULL, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4 RETURNING 1`,
      [input.email.id, scope.projectId, `recipient suppressed (${input.reason})`, input.email.attempts],
    );
    return rows.length > 0;
  }

  /**
   * Back to QUEUED as if never claimed (relay throttling, or a pause found before the hand-off): the
   * claim's attempt is given back and the last error kept, so a long throttle never uses up the email's
   * attempts.
   */
  async releaseUntouched(db: Db, scope: ProjectScope, input: { email: ClaimedEmail }): Promise<void> {
    await queryPrepared(
      db,
      `UPDATE emails SET status = 'QUEUED', claimed_until = NULL, attempts = attempts - 1, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $3`,
      [input.email.id, scope.projectId, input.email.attempts],
    );
  }

  /**
   * A temporary refusal (SMTP 4xx): back to QUEUED with the reason, one more soft bounce counted.
   * Answers the soft bounces so far (null: the claim was lost, nothing changed).
   */
  async releaseSoftBounce(db: Db, scope: ProjectScope, input: { email: ClaimedEmail; error: string }): Promise<number | null> {
    const [row] = await queryPrepared<{ soft_bounces: number }>(
      db,
      `UPDATE emails SET status = 'QUEUED', claimed_until = NULL, error = $3, soft_bounces = soft_bounces + 1, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status = 'SENDING' AND attempts = $4 RETURNING soft_bounces`,
      [input.email.id, scope.projectId, input.error.slice(0, 1000), input.email.attempts],
    );
    return row ? row.soft_bounces : null;
  }

  /**
   * An asynchronous bounce (DSN): a SENT email becomes BOUNCED. Only the first report changes it
   * (`status = 'SENT'`), so a report delivered twice is processed once. True when this call did.
   */
  async markBounced(db: Db, scope: ProjectScope, input: { emailId: string; error: string }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE emails SET status = 'BOUNCED', bounced_at = now(), error = $3, updated_at = now()
        WHERE id = $1 AND project_id = $2 AND status = 'SENT' RETURNING 1`,
      [input.emailId, scope.projectId, input.error.slice(0, 1000)],
    );
    return rows.length > 0;
  }

  /** A complaint (ARF) about the email: the first one is recorded (true), a repeat changes nothing. */
  async markComplained(db: Db, scope: ProjectScope, input: { emailId: string }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE emails SET complained_at = now(), updated_at = now()
        WHERE id = $1 AND project_id = $2 AND complained_at IS NULL AND status IN ('SENT', 'BOUNCED') RETURNING 1`,
      [input.emailId, scope.projectId],
    );
    return rows.length > 0;
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
}
