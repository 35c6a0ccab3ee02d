import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { SegmentsController } from './segments.controller.js';
import { SegmentsRepository } from './segments.repository.js';
import { SegmentsService } from './segments.service.js';

/**
 * /segments. `segment-condition.ts` (framework-free) validates and compiles conditions for campaigns
 * and workflows too; `SegmentsService` is exported for campaigns that target a stored segment.
 */
@Module({
  imports: [ContactsModule],
  controllers: [SegmentsController],
  providers: [SegmentsService, SegmentsRepository],
  exports: [SegmentsService, SegmentsRepository],
})
export class SegmentsModule {}
