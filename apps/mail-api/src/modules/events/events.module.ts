import { Module } from '@nestjs/common';
import { EventsController } from './events.controller.js';
import { EventsRepository } from './events.repository.js';
import { EventsService } from './events.service.js';

/** GET /events and /events/names. POST /v1/track records the events (modules/track). */
@Module({ controllers: [EventsController], providers: [EventsService, EventsRepository] })
export class EventsModule {}
