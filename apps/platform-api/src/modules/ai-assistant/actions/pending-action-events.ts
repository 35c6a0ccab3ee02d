import { Injectable } from '@nestjs/common';
import { EventBus } from '../../../core/events/event-bus.service.js';
import { PlatformEventId } from '../../../core/events/event-ids.js';
import type { PendingActionRow } from './pending-actions.repository.js';

type Transition = 'created' | 'confirmed' | 'cancelled' | 'expired' | 'failed';

const EVENT_OF: Record<Transition, string> = {
  created: PlatformEventId.AiActionCreated,
  confirmed: PlatformEventId.AiActionConfirmed,
  cancelled: PlatformEventId.AiActionCancelled,
  expired: PlatformEventId.AiActionExpired,
  failed: PlatformEventId.AiActionFailed,
};

/**
 * The `ai.action.*` events, one per transition. Each is emitted only by the request (or job run) whose
 * conditional UPDATE made the transition, so a repeated cancel or a race emits nothing twice.
 */
@Injectable()
export class PendingActionEvents {
  constructor(private readonly events: EventBus) {}

  async emit(transition: Transition, rows: PendingActionRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.events
      .emitMany(
        rows.map((row) => ({
          id: EVENT_OF[transition],
          tenantId: row.tenantId,
          organizationId: row.organizationId,
          payload: {
            id: row.id,
            agentId: row.agentId,
            toolName: row.toolName,
            status: transition === 'created' ? 'pending' : transition,
            targetEntityType: row.targetEntityType,
            targetRecordId: row.targetRecordId,
            userId: row.resolvedByUserId ?? row.createdByUserId,
          },
        })),
      )
      .catch(() => undefined);
  }
}
