import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { EventBus } from '../../core/events/event-bus.service.js';
import { PlatformEventId } from '../../core/events/event-ids.js';
import { scopeOf } from '../../core/scope/tenant-scope.js';
import {
  NOTIFICATIONS_PAGE_SIZE_DEFAULT,
  type ListNotificationsQuery,
  type NotificationActionRequestDto,
  type NotificationItemDto,
  type NotificationPageDto,
} from './notifications.dto.js';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';
import { NotificationsRepository, toNotificationItem, type NotificationRow } from './notifications.repository.js';
import { UnreadCountCache } from './unread-count-cache.service.js';

export interface NotificationChanged {
  ok: true;
  notification: NotificationItemDto;
}

/**
 * A recipient's side: their own notifications only (anyone else's id is 404), and the status
 * transitions of decisions.md "Notifications":
 *   read:    unread -> read (readAt set); other statuses keep theirs
 *   dismiss: any -> dismissed
 *   restore: dismissed -> read (default) or unread; anything else is 409
 *   action:  claimed once (actionTaken, status actioned); a second claim is 409
 * Each change tells the unread-count cache after it is written (whether or not it changed the count).
 */
@Injectable()
export class NotificationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: NotificationsRepository,
    private readonly events: EventBus,
    private readonly unread: UnreadCountCache,
  ) {}

  async list(auth: AuthContext, query: ListNotificationsQuery): Promise<NotificationPageDto> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? NOTIFICATIONS_PAGE_SIZE_DEFAULT;
    const { status, type, severity, sourceEntityType, sourceEntityId, since, ids } = query;
    const { rows, total } = await this.repository.list(this.dataSource, scopeOf(auth), {
      filters: { status, type, severity, sourceEntityType, sourceEntityId, since, ids: ids?.length ? ids : undefined },
      page: { limit: pageSize, offset: (page - 1) * pageSize },
    });
    return { items: rows.map(toNotificationItem), total, page, pageSize, totalPages: Math.ceil(total / pageSize) };
  }

  async unreadCount(auth: AuthContext): Promise<{ unreadCount: number }> {
    const count = await this.unread.get(auth.tenantId, auth.userId, () => this.repository.unreadCount(this.dataSource, scopeOf(auth)));
    return { unreadCount: count };
  }

  async markAllRead(auth: AuthContext): Promise<{ ok: true; count: number }> {
    const count = await this.repository.markAllRead(this.dataSource, scopeOf(auth));
    await this.changedFor(auth);
    return { ok: true, count };
  }

  async read(auth: AuthContext, id: string): Promise<NotificationChanged> {
    const row = await this.repository.markRead(this.dataSource, scopeOf(auth), id);
    await this.changedFor(auth);
    return changed(row);
  }

  async dismiss(auth: AuthContext, id: string): Promise<NotificationChanged> {
    const row = await this.repository.dismiss(this.dataSource, scopeOf(auth), id);
    await this.changedFor(auth);
    return changed(row);
  }

  async restore(auth: AuthContext, id: string, to: 'read' | 'unread'): Promise<NotificationChanged> {
    let row: NotificationRow | null;
    try {
      row = await this.repository.restore(this.dataSource, scopeOf(auth), { id, to });
      await this.changedFor(auth);
    } catch (err) {
      if (isUniqueViolation(err, 'notifications_group_key_uq')) {
        throw DomainError.conflict('another notification with the same groupKey is active');
      }
      throw err;
    }
    if (row) return changed(row);
    await this.mustExist(auth, id);
    throw DomainError.conflict('notification is not dismissed');
  }

  async action(auth: AuthContext, id: string, dto: NotificationActionRequestDto): Promise<NotificationChanged> {
    const current = await this.mustExist(auth, id);
    if (!current.actions.some((a) => a.id === dto.actionId)) throw DomainError.badRequest('unknown action');
    if (current.action_taken) throw DomainError.conflict('action already taken');
    if (current.status === 'dismissed') throw DomainError.conflict('notification is dismissed; restore it first');
    // The claim: only the first of concurrent calls wins.
    const row = await this.repository.claimAction(this.dataSource, scopeOf(auth), {
      id,
      actionId: dto.actionId,
      payload: dto.payload ?? null,
    });
    if (!row) throw DomainError.conflict('action already taken');
    await this.changedFor(auth);
    await this.events.emit({
      id: PlatformEventId.NotificationActioned,
      tenantId: row.tenant_id,
      organizationId: row.organization_id,
      recipientUserId: row.recipient_user_id,
      payload: {
        notificationId: row.id,
        actionId: dto.actionId,
        payload: dto.payload ?? null,
        type: row.type,
        sourceModule: row.source_module,
        sourceEntityType: row.source_entity_type,
        sourceEntityId: row.source_entity_id,
      },
    });
    return changed(row);
  }

  /** The caller's own notifications changed: its cached unread count goes, on every instance. */
  private changedFor(auth: AuthContext): Promise<void> {
    return this.unread.changed(auth.tenantId, [auth.userId]);
  }

  private async mustExist(auth: AuthContext, id: string): Promise<NotificationRow> {
    const row = await this.repository.findOwn(this.dataSource, scopeOf(auth), id);
    if (!row) throw DomainError.notFound('notification not found');
    return row;
  }
}

function changed(row: NotificationRow | null): NotificationChanged {
  if (!row) throw DomainError.notFound('notification not found');
  return { ok: true, notification: toNotificationItem(row) };
}
