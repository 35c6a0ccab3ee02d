import { Module } from '@nestjs/common';
import { DeclaredEventsService } from './declared-events.service.js';
import { EventStreamService } from './event-stream.service.js';
import { PlatformEventsController } from './platform-events.controller.js';

/** The declared-events catalogue (GET /events) and the live stream (GET /events/stream). */
@Module({
  controllers: [PlatformEventsController],
  providers: [DeclaredEventsService, EventStreamService],
  exports: [DeclaredEventsService],
})
export class PlatformEventsModule {}
