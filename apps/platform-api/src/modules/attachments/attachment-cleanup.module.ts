import { Module } from '@nestjs/common';
import { AttachmentStorageCleanup } from './attachment-storage-cleanup.service.js';
import { AttachmentStorageDeletionsRepository } from './attachment-storage-deletions.repository.js';
import { AttachmentsQueue } from './attachments.queue.js';
import { AttachmentStorageModule } from './storage/attachment-storage.module.js';

/**
 * The removal of stored bytes no row points at (AttachmentStorageCleanup), for everything that
 * deletes attachment metadata: the attachments module itself, the directory's tenant delete, and the
 * worker that sweeps what is still pending.
 */
@Module({
  imports: [AttachmentStorageModule],
  providers: [AttachmentStorageDeletionsRepository, AttachmentStorageCleanup, AttachmentsQueue],
  exports: [AttachmentStorageCleanup, AttachmentsQueue],
})
export class AttachmentCleanupModule {}
