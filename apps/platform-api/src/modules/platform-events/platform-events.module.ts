import { Module } from '@nestjs/common';

/** The declared-events catalogue (GET /events) and the live stream (GET /events/stream). */
@Module({})
export class PlatformEventsModule {}
