import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Redis } from 'ioredis';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { startInProcessWorker } from '@app/service-kit/testing';
import { AccountEmailJob, AccountEmailQueue } from '../src/modules/account-email/account-email.queue.js';
import { hashToken } from '../src/modules/auth/credentials.js';
import { PasswordResetService } from '../src/modules/auth/password-reset.service.js';
import { WorkerModule } from '../src/worker.module.js';
import { Factories, login, testIp } from './support/factories.js';
import { startMailApiStub, tokenFromLink, waitFor } from './support/mail-api-stub.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const MAIL_KEY = `sk_${'cd'.repeat(24)}`;
const APP_URL = 'http://links.example.test';

/**
 * Issue #11 item 15: reset and setup links never sit in Redis. The job names the one-time token row;
 * the worker builds the link when it sends. Everything here reads the real queue and the real Redis.
 */
describe('account email jobs carry no token or link', () => {
  let stub: Awaited<ReturnType<typeof startMailApiStub>>;
  let t: PlatformTestApp;
  let worker: INestApplicationContext | null = null;
  let f: Factories;
  let redis: Redis;
  let tenant: { id: string; organizationId: string };
  let roleId: string;

  beforeAll(async () => {
    stub = await startMailApiStub();
    t = await startPlatformApp({
      env: {
        PLATFORM_MAIL_API_URL: stub.url,
        PLATFORM_MAIL_API_KEY: MAIL_KEY,
        PLATFORM_MAIL_FROM: 'accounts@example.com',
        PLATFORM_APP_URL: APP_URL,
      },
    });
    f = Factories.of(t);
    redis = new Redis(t.config.redisUrl);
    tenant = await f.tenant();
    roleId = (await f.role(tenant.id, { features: [] })).id;
  });
  afterAll(async () => {
    await worker?.close();
    redis.disconnect();
    await t.close();
    await stub.close();
  });

  const startWorker = async () => {
    if (worker) return;
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config));
  };
  const queue = () => t.app.get(QueueService).queue(AccountEmailQueue);
  const sendJobTo = (to: string) =>
    waitFor(async () =>
      (await queue().getJobs(['waiting', 'active', 'delayed', 'completed', 'failed'])).find(
        (j) => j.name === AccountEmailJob.Send && j.data.to === to,
      ),
    );

  /** Every string value under this test's queue prefix: job hashes, lists, streams, whatever BullMQ keeps. */
  async function everythingInRedis(): Promise<string> {
    const keys = await redis.keys(`${t.config.queuePrefix}:*`);
    const parts: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'string') parts.push((await redis.get(key)) ?? '');
      else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, 0, -1)));
    }
    return parts.join('\n');
  }

  it('invitation: the queued job holds a token reference only; the worker sends a working setup link, then forgets the token', async () => {
    const invitee = await f.user(tenant, { password: null, roleIds: [roleId] });
    const service = t.app.get(PasswordResetService);
    await service.sendInvitation(tenant.id, invitee.id);
    // A second invitee invited twice before the worker runs: the first token is dead when its job runs.
    const twice = await f.user(tenant, { password: null, roleIds: [roleId] });
    await service.sendInvitation(tenant.id, twice.id);
    await service.sendInvitation(tenant.id, twice.id);
    const twiceRows: { id: string }[] = await t.app
      .get(DataSource)
      .query('SELECT id FROM auth_tokens WHERE user_id = $1 ORDER BY used_at NULLS LAST', [twice.id]);

    // No worker yet: the job waits in Redis exactly as queued.
    const job = await sendJobTo(invitee.email);
    const [row] = await t.app.get(DataSource).query('SELECT id FROM auth_tokens WHERE user_id = $1', [invitee.id]);
    expect(job.data).toEqual({ kind: 'invitation', to: invitee.email, tokenId: row.id });
    const stored = await everythingInRedis();
    expect(stored).toContain(row.id);
    expect(stored).not.toMatch(/setup-password|token=|links\.example\.test/);

    await startWorker();
    const sent = await waitFor(() => stub.sends.find((s) => s.body.to === invitee.email));
    expect(sent.headers['idempotency-key']).toBe(`platform-invitation-${row.id}`);
    const token = tokenFromLink(sent.body.body, `${APP_URL}/setup-password`);
    expect((await t.app.get(DataSource).query('SELECT id FROM auth_tokens WHERE token_hash = $1', [hashToken(token)]))[0].id).toBe(row.id);
    const everything = await everythingInRedis();
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(encodeURIComponent(token));
    expect(everything).not.toMatch(/setup-password/);

    // Once sent, the row no longer holds a way back to the token.
    await waitFor(async () =>
      (await t.app.get(DataSource).query('SELECT sealed_token FROM auth_tokens WHERE id = $1', [row.id]))[0].sealed_token === null
        ? true
        : null,
    );

    await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token, password: 'set-from-link-1' })
      .expect(200);
    await login(t, invitee.email, 'set-from-link-1');

    // The superseded invitation is not sent (its link would not work); the live one is.
    const sentTwice = await waitFor(() => stub.sends.find((s) => s.body.to === twice.email));
    expect(sentTwice.headers['idempotency-key']).toBe(`platform-invitation-${twiceRows[1].id}`);
    const skipped = await waitFor(async () => (await queue().getJobs(['completed'])).find((j) => j.data.tokenId === twiceRows[0].id));
    expect(skipped.returnvalue).toEqual({ delivered: 'skipped' });
    expect(stub.sends.filter((s) => s.body.to === twice.email)).toHaveLength(1);
  });

  it('password reset: neither the queued email job nor anything else in Redis holds the token or the link', async () => {
    await startWorker();
    const user = await f.user(tenant, { roleIds: [roleId] });
    await request(t.url)
      .post('/auth/reset')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email })
      .expect(200, { ok: true });
    const sent = await waitFor(() => stub.sends.find((s) => s.body.to === user.email));
    const token = tokenFromLink(sent.body.body, `${APP_URL}/reset-password`);
    const job = await sendJobTo(user.email);
    expect(Object.keys(job.data).sort()).toEqual(['kind', 'to', 'tokenId']);
    expect(job.data.kind).toBe('password_reset');
    expect(JSON.stringify(job.returnvalue ?? null)).not.toContain(token);
    const everything = await everythingInRedis();
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(encodeURIComponent(token));
    expect(everything).not.toMatch(/reset-password/);

    await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token, password: 'reset-from-link-1' })
      .expect(200);
    await login(t, user.email, 'reset-from-link-1');
  });
});
