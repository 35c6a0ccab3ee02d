import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { HousekeepingJobs } from '../src/modules/maintenance/housekeeping.jobs.js';
import { WorkerModule } from '../src/worker.module.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

describe('housekeeping: purge of expired rows (hourly job)', () => {
  let t: PlatformTestApp;
  let ds: DataSource;
  let worker: INestApplicationContext;
  let jobs: HousekeepingJobs;
  beforeAll(async () => {
    t = await startPlatformApp();
    ds = t.app.get(DataSource);
    // The worker's modules, as worker.ts builds them: the job processor lives there.
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(t.config), { logger: false });
    jobs = worker.get(HousekeepingJobs);
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
  });

  it('deletes sessions and one-time tokens a day past expiry and notifications a month past it, and nothing else', async () => {
    const f = Factories.of(t);
    const { tenant, user, auth } = await f.loggedInUser(t, { features: ['*'] });
    const insertSession = (hash: string, expires: string) =>
      ds.query(
        `INSERT INTO sessions (tenant_id, user_id, session_token_hash, expires_at) VALUES ($1, $2, $3, now() + $4::interval) RETURNING id`,
        [tenant.id, user.id, hash, expires],
      );
    const insertToken = (hash: string, expires: string) =>
      ds.query(
        `INSERT INTO auth_tokens (tenant_id, user_id, purpose, token_hash, expires_at) VALUES ($1, $2, 'password_reset', $3, now() + $4::interval) RETURNING id`,
        [tenant.id, user.id, hash, expires],
      );
    const insertNotification = (title: string, expires: string | null) =>
      ds.query(
        `INSERT INTO notifications (tenant_id, recipient_user_id, batch_id, type, severity, title, expires_at)
         VALUES ($1, $2, gen_random_uuid(), 'test', 'info', $3, now() + $4::interval) RETURNING id`,
        [tenant.id, user.id, title, expires],
      );
    await insertSession('old-session', '-2 days');
    await insertSession('recently-expired-session', '-1 hour');
    await insertToken('old-token', '-2 days');
    await insertToken('live-token', '1 hour');
    await insertNotification('old', '-31 days');
    await insertNotification('expired-last-week', '-7 days');
    await insertNotification('never-expires', null);

    expect(await jobs.purgeExpired()).toEqual({ sessions: 1, auth_tokens: 1, notifications: 1 });
    const left = async (sql: string) => (await ds.query(sql, [user.id])).map((r: { v: string }) => r.v).sort();
    expect(await left(`SELECT session_token_hash AS v FROM sessions WHERE user_id = $1 AND session_token_hash LIKE '%session'`)).toEqual([
      'recently-expired-session',
    ]);
    expect(await left(`SELECT token_hash AS v FROM auth_tokens WHERE user_id = $1`)).toEqual(['live-token']);
    expect(await left(`SELECT title AS v FROM notifications WHERE recipient_user_id = $1`)).toEqual(['expired-last-week', 'never-expires']);
    // The caller's own (live) session was not touched.
    await request(t.url).get('/auth/profile').set(auth).expect(200);
    // A second run finds nothing.
    expect(await jobs.purgeExpired()).toEqual({ sessions: 0, auth_tokens: 0, notifications: 0 });
  });
});
