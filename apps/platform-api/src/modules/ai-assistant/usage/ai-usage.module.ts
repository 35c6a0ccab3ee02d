import { Module } from '@nestjs/common';
import { AiUsageController } from './ai-usage.controller.js';
import { AiUsageRepository } from './ai-usage.repository.js';
import { AiUsageService } from './ai-usage.service.js';
import { TokenBudgetService } from './token-budget.service.js';

/** Token usage rows, their reports (/ai_assistant/usage) and the daily token budgets. */
@Module({
  controllers: [AiUsageController],
  providers: [AiUsageService, AiUsageRepository, TokenBudgetService],
  exports: [AiUsageService, TokenBudgetService],
})
export class AiUsageModule {}
