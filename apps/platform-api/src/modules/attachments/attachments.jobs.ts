import { Injectable } from '@nestjs/common';
import { OnJob } from '@app/service-kit';
import { AttachmentStorageCleanup } from './attachment-storage-cleanup.service.js';
import { ATTACHMENTS_QUEUE, AttachmentsJob } from './attachments.queue.js';

@Injectable()
export class AttachmentsJobs {
  constructor(private readonly cleanup: AttachmentStorageCleanup) {}

  /**
   * Removes due pending deletions from storage. Idempotent: removing a key (or prefix) that is gone
   * succeeds, and a row is deleted only once its removal succeeded; concurrent runs claim different rows.
   */
  @OnJob({ queue: ATTACHMENTS_QUEUE, name: AttachmentsJob.RemoveStored })
  removeStored(): Promise<{ removed: number; failed: number }> {
    return this.cleanup.sweep();
  }
}
