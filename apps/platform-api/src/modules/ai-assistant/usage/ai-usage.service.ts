import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf } from '../../../core/scope/tenant-scope.js';
import {
  AiUsageRepository,
  type DailyUsage,
  type NewUsageEvent,
  type SessionUsage,
  type UsageEvent,
  type UsageRange,
} from './ai-usage.repository.js';
import {
  type DailyUsageQuery,
  SESSION_EVENTS_MAX,
  type SessionUsageQuery,
  USAGE_RANGE_MAX_DAYS,
  type UsageRangeQuery,
} from './ai-usage.dto.js';

const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Token usage: one row per model step, written by chat and run-object as each step finishes, and the
 * reports of /ai_assistant/usage (rollups computed by GROUP BY at read time, so they are never stale).
 */
@Injectable()
export class AiUsageService {
  private readonly logger = new Logger(AiUsageService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly usage: AiUsageRepository,
  ) {}

  /** Records a step. A failed write is logged, never fails the run the user is waiting on. */
  async record(auth: AuthContext, event: NewUsageEvent): Promise<void> {
    try {
      await this.usage.insert(this.dataSource, scopeOf(auth), { ...event, organizationId: auth.organizationId });
    } catch (err) {
      this.logger.error({ err: (err as Error).message, sessionId: event.sessionId, step: event.stepIndex }, 'usage row not written');
    }
  }

  async daily(auth: AuthContext, q: DailyUsageQuery): Promise<{ items: DailyUsage[] }> {
    return { items: await this.usage.daily(this.dataSource, scopeOf(auth), { ...rangeOf(q), agentId: q.agentId, modelId: q.modelId }) };
  }

  async sessions(
    auth: AuthContext,
    q: SessionUsageQuery,
  ): Promise<{ items: SessionUsage[]; total: number; limit: number; offset: number }> {
    const page = await this.usage.sessions(this.dataSource, scopeOf(auth), {
      ...rangeOf(q),
      agentId: q.agentId,
      limit: q.limit,
      offset: q.offset,
    });
    return { ...page, limit: q.limit, offset: q.offset };
  }

  async session(auth: AuthContext, sessionId: string): Promise<{ sessionId: string; items: UsageEvent[] }> {
    if (!UUID.test(sessionId)) throw DomainError.badRequest('sessionId must be a UUID');
    const items = await this.usage.sessionEvents(this.dataSource, scopeOf(auth), { sessionId, limit: SESSION_EVENTS_MAX });
    if (items.length === 0) throw DomainError.notFound('session not found');
    return { sessionId, items };
  }
}

/** `[from, to)`: a date-only `to` covers its whole UTC day. */
function rangeOf(q: UsageRangeQuery): UsageRange {
  const from = new Date(q.from);
  const to = new Date(new Date(q.to).getTime() + (DATE_ONLY.test(q.to) ? DAY_MS : 1));
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) throw DomainError.badRequest('from and to must be ISO 8601 dates');
  if (from >= to) throw DomainError.badRequest('from must not be after to');
  if (to.getTime() - from.getTime() > (USAGE_RANGE_MAX_DAYS + 1) * DAY_MS) {
    throw DomainError.badRequest(`the range may cover at most ${USAGE_RANGE_MAX_DAYS} days`);
  }
  return { from, to };
}
