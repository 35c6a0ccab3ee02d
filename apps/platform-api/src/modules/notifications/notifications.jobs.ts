import { Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { OnJob } from '@app/service-kit';
import { NotificationDispatchService } from './notification-dispatch.service.js';
import { NotificationWriter } from './notification-writer.service.js';
import {
  NotificationJob,
  NotificationsQueue,
  type NotificationEmailPayload,
  type NotificationFanOutPayload,
} from './notifications.queue.js';

/** Processors of the notifications queue (the worker entry discovers them). Both are idempotent. */
@Injectable()
export class NotificationsJobs {
  constructor(
    private readonly dispatch: NotificationDispatchService,
    private readonly writer: NotificationWriter,
  ) {}

  @OnJob({ queue: NotificationsQueue, name: NotificationJob.FanOut })
  fanOut(job: Job<NotificationFanOutPayload>) {
    return this.dispatch.processFanOut(job.data);
  }

  @OnJob({ queue: NotificationsQueue, name: NotificationJob.Email })
  email(job: Job<NotificationEmailPayload>) {
    return this.writer.queueBatchEmails(job.data);
  }
}
