import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { AttachmentStorageCleanup } from './attachment-storage-cleanup.service.js';
import { AttachmentVariantsRepository } from './attachment-variants.repository.js';
import type { AttachmentRow } from './attachments.repository.js';
import { variantKey } from './storage/attachment-storage.js';

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
 * variants' files are recorded as pending removals in that transaction and removed after the
 * commit (retried by the worker if the storage refuses: AttachmentStorageCleanup).
 */
@Injectable()
export class ImageVariantsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly variants: AttachmentVariantsRepository,
    private readonly cleanup: AttachmentStorageCleanup,
  ) {}

  /** Marks a variant used now; false when it is not listed. */
  touch(row: AttachmentRow, variant: string): Promise<boolean> {
    return this.variants.touch(this.dataSource, systemScope(row.tenantId), { attachmentId: row.id, variant });
  }

  /**
   * Lists a variant just written to storage as used now and evicts the least recently used beyond
   * the limit; their files are recorded for removal in the same transaction and removed after it.
   * When the attachment was deleted meanwhile, the variant just written is removed again.
   */
  async record(row: AttachmentRow, variant: string): Promise<void> {
    const scope = systemScope(row.tenantId);
    const pending = await this.dataSource.transaction(async (tx) => {
      if (!(await this.variants.lockAttachment(tx, scope, row.id))) return null;
      await this.variants.upsert(tx, scope, { attachmentId: row.id, variant });
      const evicted = await this.variants.evictBeyond(tx, scope, { attachmentId: row.id, keep: MAX_VARIANTS_PER_ATTACHMENT });
      return this.cleanup.enqueue(
        tx,
        scope,
        evicted.map((v) => variantKey(row.id, v)),
      );
    });
    if (pending) await this.cleanup.removeNow(pending);
    else await this.cleanup.discard(scope, [variantKey(row.id, variant)]);
  }
}
