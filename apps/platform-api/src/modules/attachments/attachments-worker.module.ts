import { Module } from '@nestjs/common';
import { AttachmentCleanupModule } from './attachment-cleanup.module.js';
import { AttachmentsJobs } from './attachments.jobs.js';

/** The worker's part of attachments: the sweep of pending storage removals (and its schedule, AttachmentsQueue). */
@Module({
  imports: [AttachmentCleanupModule],
  providers: [AttachmentsJobs],
  exports: [AttachmentCleanupModule],
})
export class AttachmentsWorkerModule {}
