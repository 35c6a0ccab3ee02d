import { Module } from '@nestjs/common';
import { AiUsageController } from './ai-usage.controller.js';
import { AiUsageRepository } from './ai-usage.repository.js';
import { AiUsageService } from './ai-usage.service.js';

/** Token usage rows and their reports (/ai_assistant/usage). */
@Module({
  controllers: [AiUsageController],
  providers: [AiUsageService, AiUsageRepository],
  exports: [AiUsageService],
})
export class AiUsageModule {}
