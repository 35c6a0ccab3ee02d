import { Injectable } from '@nestjs/common';
import { query, queryPrepared, type Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import type { ReportedEmail } from './email-outcome-events.js';

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
 * Reads of `emails` outside a send's claim: the state a failed claim finds, the email a bounce or
 * complaint report names, and the sweep's pages of emails that lost their job. It writes nothing
 * (EmailDeliveryRepository is the writer of `emails`).
 */
@Injectable()
export class EmailReadsRepository {
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
