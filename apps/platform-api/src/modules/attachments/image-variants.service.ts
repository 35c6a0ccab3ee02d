import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { AttachmentVariantsRepository } from './attachment-variants.repository.js';
import type { AttachmentRow } from './attachments.repository.js';
import { ATTACHMENT_STORAGE, type AttachmentStorage, variantKey } from './storage/attachment-storage.js';

/** decisions.md "Resizing limits": stored variants kept per attachment, the least recently used beyond removed. */
export const MAX_VARIANTS_PER_ATTACHMENT = 25;

/**
 * The bookkeeping of stored image variants (`attachment_variants`): which variants of an attachment
 * exist in storage and when each was last served, so that at most 25 are kept.
 *
 * A variant is written to storage first and listed after, so a listed variant whose file is missing
 * can happen (it is rendered again) but a file nobody lists cannot outlive the listing. Listing and
 * eviction run in one transaction holding the attachment's row lock: concurrent renders of one
 * attachment, on any instance, see each other's rows, and the count never drifts. The evicted
 * variants' files are removed after the commit.
 */
@Injectable()
export class ImageVariantsService {
  private readonly logger = new Logger(ImageVariantsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly variants: AttachmentVariantsRepository,
    @Inject(ATTACHMENT_STORAGE) private readonly storage: AttachmentStorage,
  ) {}

  /** Marks a variant used now; false when it is not listed. */
  touch(row: AttachmentRow, variant: string): Promise<boolean> {
    return this.variants.touch(this.dataSource, systemScope(row.tenantId), { attachmentId: row.id, variant });
  }

  /**
   * Lists a variant just written to storage as used now and evicts the least recently used beyond
   * the limit. When the attachment was deleted meanwhile, the variant just written is removed again.
   */
  async record(row: AttachmentRow, variant: string): Promise<void> {
    const scope = systemScope(row.tenantId);
    const evicted = await this.dataSource.transaction(async (tx) => {
      if (!(await this.variants.lockAttachment(tx, scope, row.id))) return null;
      await this.variants.upsert(tx, scope, { attachmentId: row.id, variant });
      return this.variants.evictBeyond(tx, scope, { attachmentId: row.id, keep: MAX_VARIANTS_PER_ATTACHMENT });
    });
    await this.removeFiles(row.id, evicted ?? [variant]);
  }

  private async removeFiles(attachmentId: string, variants: string[]): Promise<void> {
    const results = await Promise.allSettled(variants.map((v) => this.storage.remove(variantKey(attachmentId, v))));
    for (const result of results) {
      if (result.status === 'rejected') {
        this.logger.error({ err: result.reason as Error, attachmentId }, 'could not remove an evicted image variant');
      }
    }
  }
}
