import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import { ATTACHMENT_STORAGE, type AttachmentStorage } from './attachment-storage.js';
import { LocalAttachmentStorage } from './local-storage.driver.js';
import { S3AttachmentStorage } from './s3-storage.driver.js';

/** The driver `ATTACHMENTS_DRIVER` names: `local` (default, under ATTACHMENTS_ROOT) or `s3`. */
export function createAttachmentStorage(config: PlatformConfig): AttachmentStorage {
  const settings = config.attachmentsStorage;
  return settings.driver === 's3' ? new S3AttachmentStorage(settings) : new LocalAttachmentStorage(config.attachmentsRoot);
}

/** Provides ATTACHMENT_STORAGE (a module of its own so the upload's multer options can inject it). */
@Module({
  providers: [{ provide: ATTACHMENT_STORAGE, inject: [PLATFORM_CONFIG], useFactory: createAttachmentStorage }],
  exports: [ATTACHMENT_STORAGE],
})
export class AttachmentStorageModule implements OnApplicationShutdown {
  constructor(@Inject(ATTACHMENT_STORAGE) private readonly storage: AttachmentStorage) {}

  onApplicationShutdown(): void {
    if (this.storage instanceof S3AttachmentStorage) this.storage.destroy();
  }
}
