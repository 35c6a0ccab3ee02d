import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { AttachmentStorageDeletionsRepository, type PendingDeletion } from './attachment-storage-deletions.repository.js';
import { AttachmentsQueue } from './attachments.queue.js';
import { ATTACHMENT_STORAGE, type AttachmentStorage, objectsPrefix, VARIANTS_ROOT } from './storage/attachment-storage.js';

/** How long the process that enqueued a removal has to do it itself before the sweep may take it. */
const INLINE_HOLD_SECONDS = 60;
/** A sweep claims this many rows at a time, for this long, and removes this many keys at once. */
const SWEEP_BATCH = 100;
const SWEEP_ROUNDS = 20;
const SWEEP_LEASE_SECONDS = 300;
const PARALLEL_REMOVALS = 8;
const ERROR_TEXT_MAX = 500;

/**
 * Removes stored bytes once no row points at them, so that nothing is left behind (issue #27 item 9)
 * and nothing is removed that a row still needs.
 *
 * Whoever deletes metadata records the keys it orphans (`enqueue`, `enqueueTenant`) in its own
 * transaction, as rows of `attachment_storage_deletions`: they commit or roll back with the delete.
 * After the commit the same process removes them at once (`removeNow`: the common case, no wait); a
 * key whose removal fails stays pending with a backoff, and the worker's sweep (`sweep`, the job of
 * AttachmentsQueue) retries it until the storage confirms it is gone. Pending rows live in Postgres,
 * so a lost Redis or a process gone between commit and removal only delays the removal.
 */
@Injectable()
export class AttachmentStorageCleanup {
  private readonly logger = new Logger(AttachmentStorageCleanup.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly deletions: AttachmentStorageDeletionsRepository,
    private readonly queue: AttachmentsQueue,
    @Inject(ATTACHMENT_STORAGE) private readonly storage: AttachmentStorage,
  ) {}

  /** In the caller's transaction: keys (or prefixes ending with `/`) its delete orphans. Pass the result to `removeNow` after commit. */
  enqueue(tx: EntityManager, scope: TenantScope, storageKeys: readonly string[]): Promise<PendingDeletion[]> {
    return this.deletions.enqueue(tx, scope, { storageKeys, holdSeconds: INLINE_HOLD_SECONDS });
  }

  /** In the transaction deleting a tenant: everything stored for it; the worker removes it (`kick` after commit). */
  async enqueueTenant(tx: EntityManager, scope: TenantScope): Promise<void> {
    await this.deletions.enqueueOfTenant(tx, scope, { objectsPrefix: objectsPrefix(scope.tenantId), variantsRoot: VARIANTS_ROOT });
  }

  /** Asks the worker for a sweep now; the scheduled sweep covers a failure to ask. */
  async kick(): Promise<void> {
    await this.queue.sweepIn(0).catch((err: Error) => this.logger.warn({ err: err.message }, 'could not queue a storage sweep'));
  }

  /**
   * After the commit: removes the keys now. Never throws (the delete it follows has happened):
   * whatever is not confirmed stays pending and a sweep is queued for when it is due.
   */
  async removeNow(pending: readonly PendingDeletion[]): Promise<void> {
    try {
      const { failed } = await this.attempt(pending);
      if (failed) await this.queue.sweepIn(2000);
    } catch (err) {
      this.logger.error({ err: err as Error }, 'could not finish removing stored bytes; the sweep will');
    }
  }

  /**
   * Bytes no row ever pointed at (a failed upload, a variant rendered for an attachment deleted
   * meanwhile): recorded outside any transaction, then removed at once.
   */
  async discard(scope: TenantScope, storageKeys: readonly string[]): Promise<void> {
    try {
      await this.removeNow(await this.deletions.enqueue(this.dataSource, scope, { storageKeys, holdSeconds: INLINE_HOLD_SECONDS }));
    } catch (err) {
      this.logger.error({ err: err as Error, storageKeys }, 'could not record stored bytes to remove; they stay orphaned');
    }
  }

  /** The worker's sweep: every due row, batch by batch; then a follow-up sweep for when the next retry is due. */
  async sweep(): Promise<{ removed: number; failed: number }> {
    const total = { removed: 0, failed: 0 };
    for (let round = 0; round < SWEEP_ROUNDS; round += 1) {
      const claimed = await this.deletions.claimDue(this.dataSource, { limit: SWEEP_BATCH, leaseSeconds: SWEEP_LEASE_SECONDS });
      const outcome = await this.attempt(claimed);
      total.removed += outcome.removed;
      total.failed += outcome.failed;
      if (claimed.length < SWEEP_BATCH) break;
    }
    const next = await this.deletions.secondsToNextDue(this.dataSource);
    if (next !== null && next < SWEEP_LEASE_SECONDS) await this.queue.sweepIn(Math.ceil(next * 1000));
    if (total.removed || total.failed) this.logger.log(total, 'swept stored attachment bytes');
    return total;
  }

  /** Removes each key (a few at a time), then marks the confirmed ones done and the others failed, one statement each. */
  private async attempt(pending: readonly PendingDeletion[]): Promise<{ removed: number; failed: number }> {
    const done: string[] = [];
    const failures: { id: string; error: string }[] = [];
    for (let i = 0; i < pending.length; i += PARALLEL_REMOVALS) {
      const chunk = pending.slice(i, i + PARALLEL_REMOVALS);
      const results = await Promise.allSettled(chunk.map((p) => this.removeKey(p.storageKey)));
      results.forEach((result, j) => {
        if (result.status === 'fulfilled') done.push(chunk[j].id);
        else failures.push({ id: chunk[j].id, error: errorText(result.reason) });
      });
    }
    for (const f of failures) {
      const row = pending.find((p) => p.id === f.id);
      this.logger.warn(
        { storageKey: row?.storageKey, attempts: (row?.attempts ?? 0) + 1, err: f.error },
        'could not remove stored bytes; will retry',
      );
    }
    await this.deletions.complete(this.dataSource, done);
    await this.deletions.fail(this.dataSource, failures);
    return { removed: done.length, failed: failures.length };
  }

  private removeKey(key: string): Promise<void> {
    return key.endsWith('/') ? this.storage.removePrefix(key) : this.storage.remove(key);
  }
}

function errorText(reason: unknown): string {
  const text = reason instanceof Error ? `${reason.name}: ${reason.message}` : 'unknown error';
  return text.slice(0, ERROR_TEXT_MAX);
}
