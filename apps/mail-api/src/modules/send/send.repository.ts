import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { MailSendAttachment, MailSendResult, MailTemplateType } from '@app/contracts';
import { preparedQuery } from '@app/service-kit';
import { Sql } from '../../core/database/sql.service.js';
import type { Address } from './send-message.js';

/** How long a replay of an `Idempotency-Key` returns the first response (decisions.md "Mail"). */
export const IDEMPOTENCY_WINDOW = '24 hours';

export interface StoredIdempotentResponse {
  request_hash: string;
  response: MailSendResult;
}

export interface EmailToInsert {
  contactId: string;
  to: Address;
  subject: string;
  html: string;
}

export interface EmailMessageFields {
  from: Address;
  replyTo: string | null;
  headers: Record<string, string>;
  type: MailTemplateType;
  templateId: string | null;
  sendRequestId: string | null;
}

/** SQL of POST /v1/send. Writes run inside the caller's transaction (`tx`); every statement is set-based. */
@Injectable()
export class SendRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Takes the key for this request, or finds the earlier request's answer. A concurrent request with
   * the same key waits on the unique index until the first one commits (then sees its response) or
   * rolls back (then takes the key itself): two requests never both send. An entry past the window is
   * taken over.
   */
  async claimIdempotencyKey(
    tx: EntityManager,
    projectId: string,
    key: string,
    requestHash: string,
  ): Promise<StoredIdempotentResponse | null> {
    const claimed: unknown[] = await preparedQuery(
      tx,
      `INSERT INTO idempotency_keys (project_id, key, request_hash) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, response = NULL, created_at = now()
         WHERE idempotency_keys.created_at < now() - interval '${IDEMPOTENCY_WINDOW}'
       RETURNING 1`,
      [projectId, key, requestHash],
    );
    if (claimed.length > 0) return null;
    const [earlier] = await preparedQuery<StoredIdempotentResponse>(
      tx,
      `SELECT request_hash, response FROM idempotency_keys WHERE project_id = $1 AND key = $2`,
      [projectId, key],
    );
    return earlier as StoredIdempotentResponse;
  }

  async storeIdempotentResponse(tx: EntityManager, projectId: string, key: string, response: MailSendResult): Promise<void> {
    await preparedQuery(tx, `UPDATE idempotency_keys SET response = $3 WHERE project_id = $1 AND key = $2`, [
      projectId,
      key,
      JSON.stringify(response),
    ]);
  }

  /**
   * One contact per recipient, created (`subscribed` as given, else false: a transactional send is no
   * opt-in) or found; existing contacts change only when `subscribed` is given. Rows are taken in email
   * order so concurrent sends to overlapping lists cannot deadlock. Returns ids by lower-cased email.
   */
  async upsertRecipients(tx: EntityManager, projectId: string, emails: string[], subscribed: boolean | null): Promise<Map<string, string>> {
    const rows: { id: string; email: string }[] = await preparedQuery(
      tx,
      `INSERT INTO contacts (project_id, email, subscribed)
       SELECT $1, e.email, coalesce($3::boolean, false) FROM unnest($2::text[]) AS e(email) ORDER BY lower(e.email)
       ON CONFLICT (project_id, (lower(email))) DO UPDATE
         SET subscribed = coalesce($3::boolean, contacts.subscribed),
             updated_at = CASE WHEN $3::boolean IS NULL THEN contacts.updated_at ELSE now() END
       RETURNING id, lower(email) AS email`,
      [projectId, emails, subscribed],
    );
    return new Map(rows.map((r) => [r.email, r.id]));
  }

  async insertSendRequest(tx: EntityManager, projectId: string, attachments: MailSendAttachment[]): Promise<string> {
    const [row] = await preparedQuery<{ id: string }>(
      tx,
      `INSERT INTO send_requests (project_id, attachments) VALUES ($1, $2) RETURNING id`,
      [projectId, JSON.stringify(attachments)],
    );
    return row.id;
  }

  /** One QUEUED row per recipient, in one statement. Returns email ids by lower-cased recipient address. */
  async insertEmails(
    tx: EntityManager,
    projectId: string,
    fields: EmailMessageFields,
    emails: EmailToInsert[],
  ): Promise<Map<string, string>> {
    const rows: { id: string; to_email: string }[] = await preparedQuery(
      tx,
      `INSERT INTO emails (project_id, send_request_id, contact_id, template_id, type, to_email, to_name,
                           from_email, from_name, reply_to, subject, html, headers)
       SELECT $1, $2, r.contact_id, $3, $4, r.to_email, r.to_name, $5, $6, $7, r.subject, r.html, $8
         FROM unnest($9::uuid[], $10::text[], $11::text[], $12::text[], $13::text[]) WITH ORDINALITY
              AS r(contact_id, to_email, to_name, subject, html, ord)
        ORDER BY r.ord
       RETURNING id, lower(to_email) AS to_email`,
      [
        projectId,
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
   * Send requests hold the attachments (up to 10 MB each) only until their emails are delivered: one
   * batch of requests older than a day with no QUEUED or SENDING email left is deleted (their emails
   * keep everything but the attachments).
   */
  async purgeFinishedSendRequests(batchSize: number): Promise<number> {
    const rows = await this.sql.query(
      `DELETE FROM send_requests WHERE id IN (
         SELECT s.id FROM send_requests s
          WHERE s.created_at < now() - interval '1 day'
            AND NOT EXISTS (SELECT 1 FROM emails e WHERE e.send_request_id = s.id AND e.status IN ('QUEUED', 'SENDING'))
          ORDER BY s.created_at
          LIMIT $1)
       RETURNING 1`,
      [batchSize],
    );
    return rows.length;
  }

  async purgeExpiredIdempotencyKeys(): Promise<number> {
    const rows = await this.sql.query(
      `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${IDEMPOTENCY_WINDOW}' RETURNING 1`,
    );
    return rows.length;
  }
}
