import { Module } from '@nestjs/common';
import { EventsController } from './events.controller.js';
import { EventsRepository } from './events.repository.js';
import { EventsService } from './events.service.js';
import { TrackBatcher } from './track-batcher.js';
import { TrackController } from './track.controller.js';

@Module({
  controllers: [TrackController, EventsController],
  providers: [EventsService, EventsRepository, TrackBatcher],
  exports: [EventsService],
})
export class EventsModule {}
