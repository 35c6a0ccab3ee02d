import { DynamicModule, Global, Module } from '@nestjs/common';
import { EventBus } from './event-bus.service.js';
import { JOURNALED_EVENTS, type JournaledEventFilter } from './event-journal.js';

@Global()
@Module({})
export class EventsCoreModule {
  /** `journaled`: the events a reconnecting browser stream replays (the clientBroadcast declarations). */
  static forRoot(options: { journaled: JournaledEventFilter }): DynamicModule {
    return {
      module: EventsCoreModule,
      providers: [{ provide: JOURNALED_EVENTS, useValue: options.journaled }, EventBus],
      exports: [EventBus],
    };
  }
}
