import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { platformDataSourceOptions } from '../src/core/database/data-source-options.js';
import { AttachmentStorageDeletionsRepository } from '../src/modules/attachments/attachment-storage-deletions.repository.js';
import { createPlatformTestEnv, type PlatformTestEnv } from './support/platform-test-app.js';

/**
 * The storage sweep's claim (AttachmentStorageDeletionsRepository.claimDue) leases at most `limit` due
 * rows per call. Its earlier form picked them with a `LIMIT ... FOR UPDATE SKIP LOCKED` subquery inside
 * the UPDATE, which Postgres may re-run per candidate row (the marketing feed's bug, mail-api
 * marketing-feed.spec): each run leases the next `limit` rows, which the sweep then holds without
 * working on them. The table here is fresh and never analysed, as on a new deployment.
 */
describe('attachment storage sweep: claims at most the rows asked for', () => {
  let env: PlatformTestEnv;
  let db: DataSource;
  const deletions = new AttachmentStorageDeletionsRepository();

  beforeAll(async () => {
    env = await createPlatformTestEnv();
    db = await new DataSource(platformDataSourceOptions(env.db.url)).initialize();
    // 400 removals due (a second apart), 5 due later.
    await db.query(
      `INSERT INTO attachment_storage_deletions (tenant_id, storage_key, next_attempt_at)
       SELECT gen_random_uuid(), 'objects/' || i || '/',
              now() + CASE WHEN i > 400 THEN interval '1 hour' ELSE make_interval(secs => i - 500) END
         FROM generate_series(1, 405) AS i`,
    );
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await env?.cleanup();
  });

  const leasedCount = async () =>
    (await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM attachment_storage_deletions WHERE next_attempt_at > now()`))[0].n;

  it('leases `limit` rows per claim, never a row not yet due', async () => {
    let total = 0;
    for (const limit of [1, 7, 25, 100]) {
      const claimed = await deletions.claimDue(db, { limit, leaseSeconds: 600 });
      expect(claimed).toHaveLength(limit);
      total += limit;
      // The 5 rows due later count as leased too (their next attempt is in the future).
      expect(await leasedCount()).toBe(total + 5);
    }
    expect(await deletions.claimDue(db, { limit: 1000, leaseSeconds: 600 })).toHaveLength(400 - total);
    expect(await deletions.claimDue(db, { limit: 1000, leaseSeconds: 600 })).toHaveLength(0);
  });
});
