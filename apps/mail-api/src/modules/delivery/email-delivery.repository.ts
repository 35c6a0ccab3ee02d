import { Inject, Injectable } from '@nestjs/common';
import type { MailTemplateType } from '@app/contracts';
import { query, queryOne, queryPrepared, type Db } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { DkimKeyCipher } from '../domains/dkim-key-cipher.js';
import type { ReportedEmail } from './email-outcome-events.js';

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
export interface EngagementEmail {
  id: string;
  projectId: string;
  contactId: string | null;
  campaignId: string | null;
  /** When it was handed to SMTP (epoch ms); null: not recorded (yet). */
  sentAtMs: number | null;
  /** A person's open / click, a machine's open / click, recorded before. */
  opened: boolean;
  clicked: boolean;
  machineOpened: boolean;
  machineClicked: boolean;
  /** The database's clock when the row was read (epoch ms). */
  clockMs: number;
}

/** The first opens and clicks a batch records for one email (null: none of that kind). */
export interface EngagementMarks {
  emailId: string;
  projectId: string;
  openedAt: Date | null;
  clickedAt: Date | null;
  machineOpenedAt: Date | null;
  machineClickedAt: Date | null;
}

export interface UnfinishedEmail {
  id: string;
  projectId: string;
  type: 'TRANSACTIONAL' | 'MARKETING';
  campaignId: string | null;
  /** The workflow that wrote it (null for /v1/send and campaign mail): its priority is a workflow's. */
  workflowId: string | null;
  /** Text, not a Date: the keyset needs Postgres's microseconds, which a JS Date would cut. */
  queuedAt: string;
}

/** Marketing mail (a campaign's or a workflow's) not yet handed to the email queue by the feeder (MarketingFeedRepository). */
const UNFED_MARKETING = `(fed_at IS NULL AND (campaign_id IS NOT NULL OR workflow_id IS NOT NULL))`;

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
 * the outcome of each delivery (the feeder's `fed_at` alone is MarketingFeedRepository's). Every statement on one email is scoped to its project. Named prepared
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
   * The emails an engagement batch records opens and clicks of, locked (FOR UPDATE, in id order, so
   * concurrent batches wait for each other instead of deadlocking) until the batch commits: the burst
   * rule then sees every earlier click. Matched by id and project together (a batch may hold several
   * projects' emails). `clockMs`: the database's clock when this statement arrived, in epoch milliseconds:
   * not after the lock wait (clock_timestamp() is re-read after waiting on a row another batch updated, which
   * moved a waiting batch's clicks a whole lock wait later and split a burst across batches).
   */
  lockForEngagement(tx: Db, input: { emails: { emailId: string; projectId: string }[] }): Promise<EngagementEmail[]> {
    return queryPrepared<EngagementEmail>(
      tx,
      `SELECT id, project_id AS "projectId", contact_id AS "contactId", campaign_id AS "campaignId",
              (extract(epoch FROM sent_at) * 1000)::float8 AS "sentAtMs",
              opened_at IS NOT NULL AS opened, clicked_at IS NOT NULL AS clicked,
              machine_opened_at IS NOT NULL AS "machineOpened", machine_clicked_at IS NOT NULL AS "machineClicked",
              (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS "clockMs"
         FROM emails
        WHERE (id, project_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))
        ORDER BY id
          FOR UPDATE`,
      [input.emails.map((e) => e.emailId), input.emails.map((e) => e.projectId)],
    );
  }

  /**
   * First opens and clicks of emails locked by lockForEngagement: a person's (`opened_at`,
   * `clicked_at`) and a machine's (`machine_opened_at`, `machine_clicked_at`); a timestamp already set
   * is kept. One statement for the whole batch.
   */
  async markEngaged(tx: Db, input: { marks: EngagementMarks[] }): Promise<void> {
    const { marks } = input;
    if (marks.length === 0) return;
    await queryPrepared(
      tx,
      `UPDATE emails e
          SET opened_at = coalesce(e.opened_at, m.opened_at), clicked_at = coalesce(e.clicked_at, m.clicked_at),
              machine_opened_at = coalesce(e.machine_opened_at, m.machine_opened_at),
              machine_clicked_at = coalesce(e.machine_clicked_at, m.machine_clicked_at)
         FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[])
              AS m(id, project_id, opened_at, clicked_at, machine_opened_at, machine_clicked_at)
        WHERE e.id = m.id AND e.project_id = m.project_id`,
      [
        marks.map((m) => m.emailId),
        marks.map((m) => m.projectId),
        marks.map((m) => m.openedAt),
        marks.map((m) => m.clickedAt),
        marks.map((m) => m.machineOpenedAt),
        marks.map((m) => m.machineClickedAt),
      ],
    );
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
   * The email a bounce or complaint report names (its VERP token was verified: verp.ts). By id alone,
   * across projects: the token is the only thing the report carries; every write after is scoped to
   * the project read here.
   */
  async reported(db: Db, emailId: string): Promise<(ReportedEmail & { toEmail: string }) | null> {
    const [row] = await queryPrepared<ReportedEmail & { toEmail: string }>(
      db,
      `SELECT id, project_id AS "projectId", contact_id AS "contactId", campaign_id AS "campaignId", to_email AS "toEmail"
         FROM emails WHERE id = $1`,
      [emailId],
    );
    return row ?? null;
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

  /**
   * A page of the emails that should have a job: QUEUED for over a minute (their job may have been
   * lost with Redis) and SENDING with a lapsed claim (their worker died), keyset-paged by
   * (queued_at, id) on the partial index of unfinished emails. Marketing emails the feeder has not
   * fed yet have no job by design (MarketingFeeder feeds them); only fed ones are looked at. Paged by
   * (queued_at, id). A sweep over every project: no scope.
   */
  unfinished(db: Db, input: { after: { queuedAt: string; id: string } | null; limit: number }): Promise<UnfinishedEmail[]> {
    return query<UnfinishedEmail>(
      db,
      `SELECT id, project_id AS "projectId", type, campaign_id AS "campaignId", workflow_id AS "workflowId", queued_at::text AS "queuedAt"
         FROM emails
        WHERE status IN ('QUEUED', 'SENDING')
          AND (queued_at, id) > ($1::timestamptz, $2::uuid)
          AND NOT ${UNFED_MARKETING}
          AND ((status = 'QUEUED' AND queued_at < now() - interval '1 minute') OR (status = 'SENDING' AND claimed_until < now()))
        ORDER BY queued_at, id
        LIMIT $3`,
      [input.after?.queuedAt ?? '-infinity', input.after?.id ?? '00000000-0000-0000-0000-000000000000', input.limit],
    );
  }
}
