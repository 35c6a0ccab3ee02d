import { Injectable } from '@nestjs/common';
import { query, type Db } from '@app/service-kit';

/** The predicate of the partial index emails_marketing_backlog_idx (keep them equal), on table alias `t`. */
function waitingMarketing(t: string): string {
  return `${t}.status = 'QUEUED' AND ${t}.fed_at IS NULL AND (${t}.campaign_id IS NOT NULL OR ${t}.workflow_id IS NOT NULL)`;
}

/**
 * The marketing backlog's statements, MarketingFeeder's alone: campaign and workflow emails wait in
 * `emails` (QUEUED, `fed_at` NULL) until the feeder hands them to the email queue. Its one write is
 * `fed_at`; every other column of `emails` is EmailDeliveryRepository's. A sweep over every project
 * (the feeder's fairness is across projects): no scope.
 */
@Injectable()
export class MarketingFeedRepository {
  /**
   * The projects with marketing emails waiting to be fed, and their `maxSendRate` (a skip scan of the
   * partial index of the marketing backlog: one probe per project, however long its backlog). Every
   * project: the feeder's fairness is across projects.
   */
  marketingBacklogProjects(db: Db, input: { limit: number }): Promise<BacklogProject[]> {
    return query<BacklogProject>(
      db,
      `WITH RECURSIVE p(project_id) AS (
         (SELECT e.project_id FROM emails e WHERE ${waitingMarketing('e')} ORDER BY e.project_id LIMIT 1)
         UNION ALL
         SELECT (SELECT e.project_id FROM emails e
                  WHERE e.project_id > p.project_id AND ${waitingMarketing('e')}
                  ORDER BY e.project_id LIMIT 1)
           FROM p WHERE p.project_id IS NOT NULL
       )
       SELECT p.project_id AS "projectId", pr.max_send_rate AS "maxSendRate"
         FROM p JOIN projects pr ON pr.id = p.project_id
        LIMIT $1`,
      [input.limit],
    );
  }

  /**
   * Marks the oldest `count` waiting marketing emails of each project as fed (one statement for every
   * project) and returns them, for their jobs to be added. A row cancelled meanwhile is not fed, and
   * rows a cancel holds are skipped (fed next time, or never once CANCELLED) rather than waited for:
   * the two statements lock rows in different orders, and waiting deadlocked them (bench, once).
   * The pick is a MATERIALIZED CTE, run exactly once: as a subquery in the UPDATE's FROM, Postgres may
   * plan it as the inner side of a nested loop and re-run it per candidate row, each run locking the
   * next `n` rows (on a fresh table a feed of 21 marked 130 as fed: marketing-feed.spec).
   */
  feedMarketing(db: Db, input: { projectIds: string[]; counts: number[] }): Promise<FedEmail[]> {
    return query<FedEmail>(
      db,
      `WITH picked AS MATERIALIZED (
         SELECT x.id, q.project_id FROM unnest($1::uuid[], $2::int[]) AS q(project_id, n)
          CROSS JOIN LATERAL (
            SELECT w.id FROM emails w
             WHERE w.project_id = q.project_id AND ${waitingMarketing('w')}
             ORDER BY w.queued_at, w.id LIMIT q.n
               FOR UPDATE SKIP LOCKED) x
       )
       UPDATE emails e SET fed_at = now()
         FROM picked
        WHERE e.id = picked.id AND e.project_id = picked.project_id AND e.status = 'QUEUED' AND e.fed_at IS NULL
        RETURNING e.id, e.project_id AS "projectId", e.campaign_id AS "campaignId", e.workflow_id AS "workflowId"`,
      [input.projectIds, input.counts],
    );
  }
}

export interface BacklogProject {
  projectId: string;
  maxSendRate: number | null;
}

export interface FedEmail {
  id: string;
  projectId: string;
  campaignId: string | null;
  workflowId: string | null;
}
