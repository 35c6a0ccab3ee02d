import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { mailDataSourceOptions } from '../src/core/database/data-source-options.js';
import { MarketingFeedRepository } from '../src/modules/delivery/marketing-feed.repository.js';
import { createMailTestEnv, type MailTestEnv } from './support/mail-test-app.js';

/**
 * The feeder's one statement (MarketingFeedRepository.feedMarketing) marks exactly the number of emails
 * it was asked for per project, never more: the feeder enqueues every row it returns, so an over-feed
 * puts a project's backlog in the FIFO queue ahead of a project that starts sending a moment later.
 *
 * On a fresh table (no statistics yet: a new deployment, a new test database) Postgres planned the
 * earlier form, a LIMIT ... FOR UPDATE SKIP LOCKED subquery joined in the UPDATE's FROM, as the inner
 * side of a nested loop, re-running it once per candidate row: each run locked the next `n` rows, so a
 * feed of 21 updated 130 (fair-sending.spec once counted 206 of A's emails ahead of B's first). The
 * table here is fresh and never analysed, as in that run.
 */
describe('marketing feed: exactly the emails asked for, per project', () => {
  let t: MailTestEnv;
  let db: DataSource;
  let projects: string[];
  const emails = new MarketingFeedRepository();

  beforeAll(async () => {
    t = await createMailTestEnv();
    db = await new DataSource(mailDataSourceOptions(t.config.databaseUrl)).initialize();
    projects = [];
    for (const name of ['A', 'B']) {
      const [{ id }] = await db.query<{ id: string }[]>(
        `INSERT INTO projects (name, secret_key_hash, public_key_hash, secret_key_prefix) VALUES ($1, md5($1), md5($1 || 'pk'), 'sk_') RETURNING id`,
        [name],
      );
      projects.push(id);
    }
    // A's large campaign backlog and B's small one, waiting for the feeder (QUEUED, fed_at NULL).
    for (const [projectId, size] of [
      [projects[0], 500],
      [projects[1], 140],
    ] as const) {
      await db.query(
        `INSERT INTO emails (project_id, campaign_id, type, to_email, from_email, subject, html)
         SELECT $1, gen_random_uuid(), 'MARKETING', 'r' || i || '@example.net', 'news@example.com', 's', '<p>h</p>'
           FROM generate_series(1, $2) AS i`,
        [projectId, size],
      );
    }
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await t?.cleanup();
  });

  const fedCount = async (projectId: string) =>
    (await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM emails WHERE project_id = $1 AND fed_at IS NOT NULL`, [projectId]))[0]
      .n;

  it('feeds n of each project per statement, feed after feed', async () => {
    const asked = [
      [21, 0],
      [3, 3],
      [2, 1],
      [11, 10],
    ];
    const total = [0, 0];
    for (const counts of asked) {
      const fed = await emails.feedMarketing(db, { projectIds: projects, counts });
      const perProject = projects.map((id) => fed.filter((e) => e.projectId === id).length);
      expect(perProject).toEqual(counts);
      total[0] += counts[0];
      total[1] += counts[1];
      expect([await fedCount(projects[0]), await fedCount(projects[1])]).toEqual(total);
    }
  });
});
