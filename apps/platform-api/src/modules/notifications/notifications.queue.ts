import { Injectable } from '@nestjs/common';
import { QueueService } from '@app/service-kit';

/** The notifications queue: role and feature fan-out, and the emails of notifications. */
export const NotificationsQueue = 'platform-notifications' as const;

export const NotificationJob = {
  /** Resolve the recipients of a role or feature notification and write their rows in chunks. */
  FanOut: 'notifications.fan-out',
  /** Queue one email per notification of a batch (the tenant's email strategy is enabled). */
  Email: 'notifications.email',
} as const;

/** The content of a notification, as given by its sender (every recipient gets the same). */
export interface NotificationContent {
  type: string;
  severity: 'info' | 'warning' | 'success' | 'error';
  title: string;
  body: string | null;
  titleKey: string | null;
  bodyKey: string | null;
  titleVariables: Record<string, unknown> | null;
  bodyVariables: Record<string, unknown> | null;
  icon: string | null;
  actions: { id: string; label: string }[];
  sourceModule: string | null;
  sourceEntityType: string | null;
  sourceEntityId: string | null;
  linkHref: string | null;
  groupKey: string | null;
  /** ISO 8601; null: never expires. */
  expiresAt: string | null;
}

export type NotificationFanOutTarget = { kind: 'role'; roleId: string } | { kind: 'feature'; requiredFeature: string };

export interface NotificationFanOutPayload {
  /** Generated per request; unique (batch, recipient) makes a retried or duplicated job a no-op. */
  batchId: string;
  tenantId: string;
  createdByUserId: string | null;
  target: NotificationFanOutTarget;
  content: NotificationContent;
  requestedAt: string;
}

export interface NotificationEmailPayload {
  tenantId: string;
  batchId: string;
}

/**
 * The producer of the notifications queue. Job ids derive from the batch, so a retried request or
 * fan-out queues each job once (BullMQ ignores a second add with the same id).
 */
@Injectable()
export class NotificationsQueueProducer {
  constructor(private readonly queues: QueueService) {}

  async fanOut(payload: NotificationFanOutPayload): Promise<void> {
    await this.queues.add(NotificationsQueue, NotificationJob.FanOut, payload, { jobId: `fanout-${payload.batchId}` });
  }

  async email(payload: NotificationEmailPayload): Promise<void> {
    await this.queues.add(NotificationsQueue, NotificationJob.Email, payload, { jobId: `email-${payload.batchId}` });
  }
}
