import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { platformDataSourceOptions } from '../src/core/database/data-source-options.js';
import { PendingActionsRepository } from '../src/modules/ai-assistant/actions/pending-actions.repository.js';
import { createPlatformTestEnv, type PlatformTestEnv } from './support/platform-test-app.js';

/**
 * The expiry job's one statement (PendingActionsRepository.expireDue) expires at most `limit` rows per
 * run, the oldest first. Its earlier form picked the rows with a `LIMIT ... FOR UPDATE SKIP LOCKED`
 * subquery inside the UPDATE, which Postgres may re-run per candidate row (the marketing feed's bug,
 * mail-api marketing-feed.spec): each run locks the next `limit` rows. The table here is fresh and never
 * analysed, as on a new deployment.
 */
describe('pending action expiry: at most the rows asked for per run', () => {
  let env: PlatformTestEnv;
  let db: DataSource;
  const repository = new PendingActionsRepository();

  beforeAll(async () => {
    env = await createPlatformTestEnv();
    db = await new DataSource(platformDataSourceOptions(env.db.url)).initialize();
    const [{ id: tenantId }] = await db.query<{ id: string }[]>(`INSERT INTO tenants (name) VALUES ('expiry') RETURNING id`);
    // 400 pending actions past expiry (a minute apart, so "oldest first" has one answer), 5 not yet due.
    await db.query(
      `INSERT INTO ai_pending_actions (tenant_id, agent_id, tool_name, normalized_input, created_by_user_id, idempotency_key, expires_at)
       SELECT $1, 'auth.access_assistant', 'auth.rename_role', '{}'::jsonb, gen_random_uuid(), 'k' || i,
              now() + CASE WHEN i > 400 THEN interval '1 hour' ELSE make_interval(mins => i - 500) END
         FROM generate_series(1, 405) AS i`,
      [tenantId],
    );
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await env?.cleanup();
  });

  const expiredCount = async () =>
    (await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM ai_pending_actions WHERE status = 'expired'`))[0].n;

  it('expires `limit` rows per run, oldest first, and never a row not yet due', async () => {
    let total = 0;
    for (const limit of [1, 7, 25, 100]) {
      const expired = await repository.expireDue(db, { limit });
      expect(expired).toHaveLength(limit);
      total += limit;
      expect(await expiredCount()).toBe(total);
    }
    // Oldest first: every expired row expired before every row still pending.
    const [{ oldestFirst }] = await db.query<{ oldestFirst: boolean }[]>(
      `SELECT (SELECT max(expires_at) FROM ai_pending_actions WHERE status = 'expired')
                < (SELECT min(expires_at) FROM ai_pending_actions WHERE status = 'pending') AS "oldestFirst"`,
    );
    expect(oldestFirst).toBe(true);
    // The rest of the due rows, then nothing: the 5 rows not yet due stay pending.
    expect(await repository.expireDue(db, { limit: 1000 })).toHaveLength(400 - total);
    expect(await repository.expireDue(db, { limit: 1000 })).toHaveLength(0);
    expect(await expiredCount()).toBe(400);
  });
});
