import { Injectable } from '@nestjs/common';
import type { PlatformEvent } from './platform-event.js';

/**
 * The bus modules emit to. Emitting never fails the caller's operation (events are notifications of
 * something that already happened). Listeners and cross-instance delivery are added by the events issue.
 */
@Injectable()
export class EventBus {
  async emit(event: Omit<PlatformEvent, 'timestamp'> & { timestamp?: number }): Promise<void> {
    void event;
  }
}
