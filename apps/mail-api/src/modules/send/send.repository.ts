import { Injectable } from '@nestjs/common';
import type { MailSendAttachment, MailSendResult } from '@app/contracts';
import { execute, queryPrepared, type Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';

/** How long a replay of an `Idempotency-Key` returns the first response (decisions.md "Mail"). */
export const IDEMPOTENCY_WINDOW = '24 hours';

export interface StoredIdempotentResponse {
  request_hash: string;
  response: MailSendResult;
}

/**
 * The one writer of `idempotency_keys` and `send_requests`, for POST /v1/send. Writes run inside the
 * caller's transaction (`tx`) as named prepared statements (send is a hot path); the recipients'
 * contacts and the email rows are written by their own repositories (ContactsRepository,
 * EmailDeliveryRepository) in the same transaction.
 */
@Injectable()
export class SendRepository {
  /**
   * Takes the key for this request, or finds the earlier request's answer. A concurrent request with
   * the same key waits on the unique index until the first one commits (then sees its response) or
   * rolls back (then takes the key itself): two requests never both send. An entry past the window is
   * taken over.
   */
  async claimIdempotencyKey(
    tx: Db,
    scope: ProjectScope,
    input: { key: string; requestHash: string },
  ): Promise<StoredIdempotentResponse | null> {
    const claimed = await queryPrepared(
      tx,
      `INSERT INTO idempotency_keys (project_id, key, request_hash) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, response = NULL, created_at = now()
         WHERE idempotency_keys.created_at < now() - interval '${IDEMPOTENCY_WINDOW}'
       RETURNING 1`,
      [scope.projectId, input.key, input.requestHash],
    );
    if (claimed.length > 0) return null;
    const [earlier] = await queryPrepared<StoredIdempotentResponse>(
      tx,
      `SELECT request_hash, response FROM idempotency_keys WHERE project_id = $1 AND key = $2`,
      [scope.projectId, input.key],
    );
    return earlier;
  }

  async storeIdempotentResponse(tx: Db, scope: ProjectScope, input: { key: string; response: MailSendResult }): Promise<void> {
    await queryPrepared(tx, `UPDATE idempotency_keys SET response = $3 WHERE project_id = $1 AND key = $2`, [
      scope.projectId,
      input.key,
      JSON.stringify(input.response),
    ]);
  }

  async insertSendRequest(tx: Db, scope: ProjectScope, attachments: MailSendAttachment[]): Promise<string> {
    const [row] = await queryPrepared<{ id: string }>(
      tx,
      `INSERT INTO send_requests (project_id, attachments) VALUES ($1, $2) RETURNING id`,
      [scope.projectId, JSON.stringify(attachments)],
    );
    return row.id;
  }

  /**
   * Send requests hold the attachments (up to 10 MB each) only until their emails are delivered: one
   * batch of requests older than a day with no QUEUED or SENDING email left is deleted (their emails
   * keep everything but the attachments). A sweep over every project: no scope.
   */
  purgeFinishedSendRequests(db: Db, batchSize: number): Promise<number> {
    return execute(
      db,
      `DELETE FROM send_requests WHERE id IN (
         SELECT s.id FROM send_requests s
          WHERE s.created_at < now() - interval '1 day'
            AND NOT EXISTS (SELECT 1 FROM emails e WHERE e.send_request_id = s.id AND e.status IN ('QUEUED', 'SENDING'))
          ORDER BY s.created_at
          LIMIT $1)`,
      [batchSize],
    );
  }

  /** Keys past their window, of every project: no scope. */
  purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
    return execute(db, `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${IDEMPOTENCY_WINDOW}'`);
  }
}
