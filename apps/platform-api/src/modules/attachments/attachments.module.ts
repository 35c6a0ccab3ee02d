import { Module } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { AttachmentCleanupModule } from './attachment-cleanup.module.js';
import { AttachmentFilesController } from './attachment-files.controller.js';
import { AttachmentFilesService } from './attachment-files.service.js';
import { AttachmentImagesController } from './attachment-images.controller.js';
import { AttachmentImagesService } from './attachment-images.service.js';
import { AttachmentVariantsRepository } from './attachment-variants.repository.js';
import { AttachmentsController } from './attachments.controller.js';
import { AttachmentsRepository } from './attachments.repository.js';
import { AttachmentsService } from './attachments.service.js';
import { ImageResizer } from './image-resizer.js';
import { ImageVariantsService } from './image-variants.service.js';
import { OptionalAuthGuard } from './optional-auth.guard.js';
import { ATTACHMENT_STORAGE, type AttachmentStorage } from './storage/attachment-storage.js';
import { AttachmentStorageModule } from './storage/attachment-storage.module.js';
import { StreamingUploadEngine } from './storage/streaming-upload.engine.js';

/** Bounds of the multipart form besides the file's own 25 MB (enforced by the engine while it streams). */
const FORM_LIMITS = { files: 1, fields: 10, parts: 12, fieldSize: 4096, fieldNameSize: 100 };

/**
 * Attachments (/attachments, /attachments/file, /attachments/image): owns `attachments` and the
 * stored bytes (ATTACHMENT_STORAGE: local disk or S3). Uploads go through multer with the streaming
 * engine. Deletes leave the removal of stored bytes to AttachmentCleanupModule (its queue's sweep
 * runs in the worker: AttachmentsWorkerModule).
 */
@Module({
  imports: [
    AttachmentStorageModule,
    AttachmentCleanupModule,
    MulterModule.registerAsync({
      imports: [AttachmentStorageModule],
      inject: [ATTACHMENT_STORAGE],
      useFactory: (storage: AttachmentStorage) => ({
        storage: new StreamingUploadEngine(storage),
        limits: FORM_LIMITS,
        // Browsers send file names as raw UTF-8; busboy's default would read them as latin1.
        defParamCharset: 'utf8',
      }),
    }),
  ],
  controllers: [AttachmentsController, AttachmentFilesController, AttachmentImagesController],
  providers: [
    AttachmentsService,
    AttachmentFilesService,
    AttachmentImagesService,
    AttachmentsRepository,
    AttachmentVariantsRepository,
    ImageVariantsService,
    ImageResizer,
    OptionalAuthGuard,
  ],
  exports: [AttachmentsRepository, AttachmentFilesService],
})
export class AttachmentsModule {}
