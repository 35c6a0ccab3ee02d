import { Injectable } from '@nestjs/common';
import { type Db, query, queryPrepared, isoTimestamp } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';

/** One model step of a run (decisions.md "Usage"). */
export interface NewUsageEvent {
  agentId: string;
  providerId: string;
  modelId: string;
  sessionId: string;
  stepIndex: number;
  inputTokens: number;
  outputTokens: number;
  finishReason: string | null;
}

export interface UsageEvent extends NewUsageEvent {
  id: string;
  organizationId: string | null;
  userId: string | null;
  totalTokens: number;
  createdAt: string;
}

export interface DailyUsage {
  day: string;
  agentId: string;
  modelId: string;
  providerIds: string[];
  steps: number;
  sessions: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface SessionUsage {
  sessionId: string;
  userId: string | null;
  agentIds: string[];
  modelIds: string[];
  startedAt: string;
  lastStepAt: string;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** Tokens used since the start of the current UTC day (the database's clock), and the seconds until the next. */
export interface TodaysSpend {
  tenantTokens: number;
  userTokens: number;
  secondsToNextDay: number;
}

export interface UsageRange {
  from: Date;
  /** Exclusive. */
  to: Date;
}

/** Today's tokens of tenant $1 and user $2 (exported for the plan check of its test). */
export const SPENT_TODAY_SQL = `WITH day AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS starts)
 SELECT COALESCE(sum(e.input_tokens + e.output_tokens), 0)::float8 AS "tenantTokens",
        COALESCE(sum(e.input_tokens + e.output_tokens) FILTER (WHERE e.user_id = $2), 0)::float8 AS "userTokens",
        ceil(extract(epoch FROM (SELECT starts FROM day) + interval '24 hours' - now()))::int AS "secondsToNextDay"
   FROM ai_usage_events e
  WHERE e.tenant_id = $1 AND e.created_at >= (SELECT starts FROM day)`;

/** Rows of the scope: its tenant, and its organizations when the caller is restricted to some. */
const IN_SCOPE = `tenant_id = $1 AND ($2::uuid[] IS NULL OR organization_id = ANY($2::uuid[]))`;

const scopeParams = (scope: TenantScope) => [scope.tenantId, scope.organizationIds];

/**
 * The one writer of `ai_usage_events` (a row per model step), and its reports: daily rollups per (day,
 * agent, model) and session summaries are GROUP BY queries over the tenant's index (tenant_id, created_at).
 */
@Injectable()
export class AiUsageRepository {
  async insert(db: Db, scope: TenantScope, input: NewUsageEvent & { organizationId: string | null }): Promise<void> {
    await queryPrepared(
      db,
      `INSERT INTO ai_usage_events (tenant_id, organization_id, user_id, agent_id, provider_id, model_id, session_id, step_index,
              input_tokens, output_tokens, finish_reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        scope.tenantId,
        input.organizationId,
        scope.userId,
        input.agentId,
        input.providerId,
        input.modelId,
        input.sessionId,
        input.stepIndex,
        input.inputTokens,
        input.outputTokens,
        input.finishReason,
      ],
    );
  }

  /**
   * Today's tokens of the tenant (all its organizations) and of the scope's user, in one index-only scan
   * of the tenant's rows since UTC midnight (index (tenant_id, created_at) INCLUDE (user_id, tokens)):
   * its cost grows with the tenant's steps of the day, which the budget itself bounds.
   */
  async spentToday(db: Db, scope: TenantScope): Promise<TodaysSpend> {
    const [row] = await queryPrepared<TodaysSpend>(db, SPENT_TODAY_SQL, [scope.tenantId, scope.userId]);
    return row;
  }

  async daily(db: Db, scope: TenantScope, input: UsageRange & { agentId?: string; modelId?: string }): Promise<DailyUsage[]> {
    return query<DailyUsage>(
      db,
      `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS "day", agent_id AS "agentId", model_id AS "modelId",
              array_agg(DISTINCT provider_id ORDER BY provider_id) AS "providerIds", count(*)::int AS steps,
              count(DISTINCT session_id)::int AS sessions, sum(input_tokens)::float8 AS "inputTokens",
              sum(output_tokens)::float8 AS "outputTokens", sum(input_tokens + output_tokens)::float8 AS "totalTokens"
         FROM ai_usage_events
        WHERE ${IN_SCOPE} AND created_at >= $3 AND created_at < $4
          AND ($5::text IS NULL OR agent_id = $5) AND ($6::text IS NULL OR model_id = $6)
        GROUP BY 1, agent_id, model_id
        ORDER BY 1, agent_id, model_id`,
      [...scopeParams(scope), input.from, input.to, input.agentId ?? null, input.modelId ?? null],
    );
  }

  /** One page of sessions, the most recently active first, and their number (also past the last page). */
  async sessions(
    db: Db,
    scope: TenantScope,
    input: UsageRange & { agentId?: string; limit: number; offset: number },
  ): Promise<{ total: number; items: SessionUsage[] }> {
    const rows = await query<SessionUsage & { total: number; sessionId: string | null }>(
      db,
      `WITH sessions AS (
         SELECT session_id, (array_agg(user_id ORDER BY created_at, step_index))[1] AS user_id,
                array_agg(DISTINCT agent_id ORDER BY agent_id) AS agent_ids, array_agg(DISTINCT model_id ORDER BY model_id) AS model_ids,
                min(created_at) AS started_at, max(created_at) AS last_step_at, count(*)::int AS steps,
                sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens
           FROM ai_usage_events
          WHERE ${IN_SCOPE} AND created_at >= $3 AND created_at < $4 AND ($5::text IS NULL OR agent_id = $5)
          GROUP BY session_id
       ),
       counted AS (SELECT count(*)::int AS total FROM sessions),
       page AS (SELECT * FROM sessions ORDER BY last_step_at DESC, session_id LIMIT $6 OFFSET $7)
       SELECT c.total, p.session_id AS "sessionId", p.user_id AS "userId", p.agent_ids AS "agentIds", p.model_ids AS "modelIds",
              ${isoTimestamp('p.started_at')} AS "startedAt", ${isoTimestamp('p.last_step_at')} AS "lastStepAt", p.steps,
              p.input_tokens AS "inputTokens", p.output_tokens AS "outputTokens", p.input_tokens + p.output_tokens AS "totalTokens"
         FROM counted c LEFT JOIN page p ON true
        ORDER BY p.last_step_at DESC, p.session_id`,
      [...scopeParams(scope), input.from, input.to, input.agentId ?? null, input.limit, input.offset],
    );
    return {
      total: rows[0]?.total ?? 0,
      items: rows.flatMap(({ total: _total, ...row }) => (row.sessionId === null ? [] : [row])),
    };
  }

  /** A session's steps in order (created_at, then step_index), at most `limit`. */
  async sessionEvents(db: Db, scope: TenantScope, input: { sessionId: string; limit: number }): Promise<UsageEvent[]> {
    return query<UsageEvent>(
      db,
      `SELECT id, organization_id AS "organizationId", user_id AS "userId", agent_id AS "agentId", provider_id AS "providerId",
              model_id AS "modelId", session_id AS "sessionId", step_index AS "stepIndex", input_tokens AS "inputTokens",
              output_tokens AS "outputTokens", input_tokens + output_tokens AS "totalTokens", finish_reason AS "finishReason",
              ${isoTimestamp('created_at')} AS "createdAt"
         FROM ai_usage_events
        WHERE ${IN_SCOPE} AND session_id = $3
        ORDER BY created_at, step_index
        LIMIT $4`,
      [...scopeParams(scope), input.sessionId, input.limit],
    );
  }
}
