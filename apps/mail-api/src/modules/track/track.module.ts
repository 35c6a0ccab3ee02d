import { Module } from '@nestjs/common';
import { WorkflowTriggerModule } from '../workflows/workflow-trigger.module.js';
import { TrackBatcher } from './track-batcher.js';
import { TrackController } from './track.controller.js';
import { TrackRepository } from './track.repository.js';
import { TrackService } from './track.service.js';

/** POST /v1/track: the contact upsert and the event, one statement (track.repository.ts), batched under load. */
@Module({ imports: [WorkflowTriggerModule], controllers: [TrackController], providers: [TrackService, TrackBatcher, TrackRepository] })
export class TrackModule {}
