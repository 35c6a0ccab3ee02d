import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { EventBus } from '../../core/events/event-bus.service.js';
import { PlatformEventId } from '../../core/events/event-ids.js';
import { systemScope, type TenantScope } from '../../core/scope/tenant-scope.js';
import { AccountEmailService } from '../account-email/account-email.service.js';
import { NotificationSettingsService } from './notification-settings.service.js';
import { NotificationsRepository, toNotificationItem, type BatchRef, type NotificationRow } from './notifications.repository.js';
import { NotificationsQueueProducer, type NotificationContent, type NotificationEmailPayload } from './notifications.queue.js';
import { UnreadCountCache } from './unread-count-cache.service.js';

/** Emails queued at once by the email job (each is one BullMQ add). */
const EMAIL_QUEUE_CONCURRENCY = 50;

/**
 * The one write path of notifications, for every sender (single, batch, role and feature fan-out):
 * set-based inserts, the `notifications.notification.created` events, and the email strategy.
 */
@Injectable()
export class NotificationWriter {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: NotificationsRepository,
    private readonly settings: NotificationSettingsService,
    private readonly queue: NotificationsQueueProducer,
    private readonly events: EventBus,
    private readonly accountEmails: AccountEmailService,
    private readonly unread: UnreadCountCache,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  /** Writes one chunk of a batch in the scope's tenant (one transaction) and announces the rows it created. */
  async write(
    scope: TenantScope,
    input: { batch: BatchRef; content: NotificationContent; recipientIds: string[] },
  ): Promise<NotificationRow[]> {
    if (input.recipientIds.length === 0) return [];
    const rows = input.content.groupKey
      ? await this.dataSource.transaction((tx) => this.repository.insertForRecipients(tx, scope, input))
      : await this.repository.insertForRecipients(this.dataSource, scope, input);
    await this.unread.changed(
      scope.tenantId,
      rows.map((row) => row.recipient_user_id),
    );
    await this.events.emitMany(
      rows.map((row) => ({
        id: PlatformEventId.NotificationCreated,
        tenantId: row.tenant_id,
        organizationId: row.organization_id,
        recipientUserId: row.recipient_user_id,
        payload: toNotificationItem(row) as unknown as Record<string, unknown>,
      })),
    );
    return rows;
  }

  /**
   * After a batch's last chunk: with the tenant's email strategy on, one job emails the whole batch.
   * Its id is the batch's, so a retried fan-out does not queue it twice.
   */
  async finishBatch(scope: TenantScope, batch: BatchRef): Promise<void> {
    const settings = await this.settings.forScope(scope);
    if (!settings.strategies.email.enabled) return;
    await this.queue.email({ tenantId: scope.tenantId, batchId: batch.batchId });
  }

  /**
   * Worker side of the email strategy: one account email per notification of the batch, deduplicated
   * by notification id (so a retry of this job sends nothing twice), delivered and retried by the
   * account-email queue through the mail-api's /v1/send.
   */
  async queueBatchEmails(payload: NotificationEmailPayload): Promise<{ queued: number }> {
    const scope = systemScope(payload.tenantId);
    const settings = await this.settings.forScope(scope);
    const email = settings.strategies.email;
    if (!email.enabled) return { queued: 0 };
    const rows = await this.repository.batchForEmail(this.dataSource, scope, payload.batchId);
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const row = rows[next++];
        await this.accountEmails.queue(
          { kind: 'notification', to: row.email, from: email.from || null, ...this.render(row, email.subjectPrefix) },
          row.id,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(EMAIL_QUEUE_CONCURRENCY, rows.length) }, worker));
    return { queued: rows.length };
  }

  private render(row: NotificationRow, subjectPrefix: string): { subject: string; text: string; html: string } {
    const subject = subjectPrefix.trim() ? `${subjectPrefix.trim()} ${row.title}` : row.title;
    const link = row.link_href ? new URL(row.link_href, this.config.appUrl).toString() : null;
    const text = [row.title, row.body, link].filter(Boolean).join('\n\n');
    const html = [
      `<p><strong>${escapeHtml(row.title)}</strong></p>`,
      row.body ? `<p>${escapeHtml(row.body).replace(/\n/g, '<br>')}</p>` : '',
      link ? `<p><a href="${escapeHtml(link)}">Open</a></p>` : '',
    ].join('');
    return { subject, text, html };
  }
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}
