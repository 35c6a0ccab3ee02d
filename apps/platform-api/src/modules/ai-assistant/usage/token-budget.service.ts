import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';
import { AiUsageRepository } from './ai-usage.repository.js';

/**
 * Daily token budgets (decisions.md "Provider endpoints and spend"): AI_TENANT_DAILY_TOKENS per tenant
 * and AI_USER_DAILY_TOKENS per user, per UTC day, counted from the usage rows. Past either, chat and
 * run-object answer 429 `budget_exceeded` with Retry-After (seconds to the next UTC day) before any
 * provider call. The check reads what finished steps recorded: turns running at the same moment may
 * each pass it and together go past the budget by what they use; the next turn is refused.
 */
@Injectable()
export class TokenBudgetService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly usage: AiUsageRepository,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  /** The refusal when the tenant or the scope's user has used its budget today, else null (the caller throws it when its other checks pass). */
  async refusal(scope: TenantScope): Promise<DomainError | null> {
    const budgets = this.config.aiRuntime.dailyTokenBudgets;
    const spent = await this.usage.spentToday(this.dataSource, scope);
    const who = spent.tenantTokens >= budgets.tenant ? 'tenant' : spent.userTokens >= budgets.user ? 'user' : null;
    if (!who) return null;
    const limit = who === 'tenant' ? budgets.tenant : budgets.user;
    return new DomainError('budget_exceeded', `the ${who}'s daily AI token budget (${limit}) is used up until 00:00 UTC`, {
      status: 429,
      headers: { 'Retry-After': String(Math.max(1, spent.secondsToNextDay)) },
    });
  }
}
