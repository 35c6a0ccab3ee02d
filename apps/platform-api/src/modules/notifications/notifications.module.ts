import { Module } from '@nestjs/common';
import { AccountEmailModule } from '../account-email/account-email.module.js';
import { NotificationDispatchService } from './notification-dispatch.service.js';
import { NotificationRecipientsRepository } from './notification-recipients.repository.js';
import { NotificationSettingsController } from './notification-settings.controller.js';
import { NotificationSettingsRepository } from './notification-settings.repository.js';
import { NotificationSettingsService } from './notification-settings.service.js';
import { NotificationWriter } from './notification-writer.service.js';
import { NotificationsController } from './notifications.controller.js';
import { NotificationsJobs } from './notifications.jobs.js';
import { NotificationsQueueProducer } from './notifications.queue.js';
import { NotificationsRepository } from './notifications.repository.js';
import { NotificationsService } from './notifications.service.js';
import { UnreadCountCache } from './unread-count-cache.service.js';

/**
 * Per-user notifications (/notifications/*): the recipient's list and status changes, senders'
 * single, batch, role and feature targets (role and feature fanned out by a job), delivery settings.
 */
@Module({
  imports: [AccountEmailModule],
  controllers: [NotificationsController, NotificationSettingsController],
  providers: [
    NotificationsService,
    NotificationDispatchService,
    NotificationWriter,
    NotificationSettingsService,
    NotificationsRepository,
    NotificationSettingsRepository,
    NotificationRecipientsRepository,
    NotificationsQueueProducer,
    NotificationsJobs,
    UnreadCountCache,
  ],
  exports: [NotificationDispatchService, NotificationsRepository],
})
export class NotificationsModule {}
