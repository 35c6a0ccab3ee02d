import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
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

const MAIL_KEY = `sk_${'ab'.repeat(24)}`;

describe('password reset and invitations through the mail-api', () => {
  let stub: Awaited<ReturnType<typeof startMailApiStub>>;
  let t: PlatformTestApp;
  let worker: INestApplicationContext;
  let f: Factories;
  let tenant: { id: string; organizationId: string };
  let roleId: string;

  beforeAll(async () => {
    stub = await startMailApiStub();
    t = await startPlatformApp({
      env: { PLATFORM_MAIL_API_URL: stub.url, PLATFORM_MAIL_API_KEY: MAIL_KEY, PLATFORM_MAIL_FROM: 'accounts@example.com' },
    });
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config));
    f = Factories.of(t);
    tenant = await f.tenant();
    roleId = (await f.role(tenant.id, { features: [] })).id;
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await stub.close();
  });

  const resetRequest = (email: string, ip = testIp()) =>
    request(t.url).post('/auth/reset').set('X-Forwarded-For', ip).type('form').send({ email });

  it('answers {ok: true} for a known account and emails a one-hour link through /v1/send', async () => {
    const user = await f.user(tenant, { roleIds: [roleId] });
    await resetRequest(user.email.toUpperCase()).expect(200, { ok: true });
    const sent = await waitFor(() => stub.sends.find((s) => s.body.to === user.email));
    expect(sent.headers.authorization).toBe(`Bearer ${MAIL_KEY}`);
    expect(sent.headers['idempotency-key']).toMatch(/^platform-password_reset-/);
    expect(sent.body.from).toBe('accounts@example.com');
    const token = tokenFromLink(sent.body.body, 'http://localhost:3000/reset-password');
    const [row] = await t.app.get(DataSource).query('SELECT expires_at FROM auth_tokens WHERE token_hash = $1', [hashToken(token)]);
    const minutes = (new Date(row.expires_at).getTime() - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(59);
    expect(minutes).toBeLessThanOrEqual(60);
  });

  it('answers the same for an unknown account and sends nothing', async () => {
    const before = stub.sends.length;
    await resetRequest('nobody-here@example.com').expect(200, { ok: true });
    // The worker resolves the request: wait for its job to complete, then check nothing was sent.
    const queue = t.app.get(QueueService).queue(AccountEmailQueue);
    const done = await waitFor(async () => {
      const jobs = await queue.getJobs(['completed']);
      return jobs.find((j) => j.name === AccountEmailJob.PasswordResetRequested && j.data.email === 'nobody-here@example.com');
    });
    expect(done.returnvalue).toEqual({ sent: false });
    expect(stub.sends.length).toBe(before);
  });

  it('confirm sets the password, ends existing sessions, and the token is single use', async () => {
    const user = await f.user(tenant, { roleIds: [roleId] });
    const oldToken = await login(t, user.email, user.password);
    await resetRequest(user.email).expect(200);
    const sent = await waitFor(() => stub.sends.find((s) => s.body.to === user.email));
    const token = tokenFromLink(sent.body.body, 'reset-password');
    const ok = await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token, password: 'a-new-password' })
      .expect(200);
    expect(ok.body).toEqual({ ok: true, redirect: '/login' });
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${oldToken}`).expect(401);
    await login(t, user.email, 'a-new-password');
    const reused = await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token, password: 'another-password' })
      .expect(400);
    expect(reused.body).toEqual({ ok: false, error: 'invalid or expired token' });
  });

  it('an expired token is refused', async () => {
    const user = await f.user(tenant, { roleIds: [roleId] });
    const issued = await t.app.get(PasswordResetService)['tokens'].issue(tenant.id, user.id, 'password_reset');
    await t.app.get(DataSource).query(`UPDATE auth_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [issued.id]);
    const res = await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token: issued.token, password: 'whatever-123' })
      .expect(400);
    expect(res.body).toEqual({ ok: false, error: 'invalid or expired token' });
  });

  it('confirm validates its payload: 400 {ok: false, error}', async () => {
    const res = await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token: 'x', password: 'short' })
      .expect(400);
    expect(res.body.ok).toBe(false);
    await request(t.url).post('/auth/reset').set('X-Forwarded-For', testIp()).type('form').send({ email: 'not-an-email' }).expect(400);
  });

  it('a request from a foreign Origin is 400 "invalid request origin"; an allowed or absent Origin is fine', async () => {
    await request(t.url)
      .post('/auth/reset')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send({ email: 'a@example.com' })
      .expect(400, { error: 'invalid request origin' });
    await request(t.url)
      .post('/auth/reset')
      .set('X-Forwarded-For', testIp())
      .set('Origin', 'http://localhost:3000')
      .type('form')
      .send({ email: 'a@example.com' })
      .expect(200);
  });

  it('rate limits: 3 per IP and email per minute, 5 confirms per IP per 5 minutes', async () => {
    const ip = testIp();
    for (let i = 0; i < 3; i += 1) await resetRequest('limited@example.com', ip).expect(200);
    const limited = await resetRequest('limited@example.com', ip).expect(429);
    expect(limited.body).toEqual({ error: expect.any(String) });
    expect(limited.headers['retry-after']).toBeDefined();
    const confirmIp = testIp();
    for (let i = 0; i < 5; i += 1) {
      await request(t.url)
        .post('/auth/reset/confirm')
        .set('X-Forwarded-For', confirmIp)
        .type('form')
        .send({ token: `bad-${i}`, password: 'long-enough-1' })
        .expect(400);
    }
    const confirmLimited = await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', confirmIp)
      .type('form')
      .send({ token: 'bad', password: 'long-enough-1' })
      .expect(429);
    expect(confirmLimited.body).toEqual({ error: expect.any(String) });
  });

  it('invitation: a 48-hour setup token, a new one invalidates the earlier, redeemed through reset/confirm', async () => {
    const invitee = await f.user(tenant, { password: null, roleIds: [roleId] });
    const service = t.app.get(PasswordResetService);
    await service.sendInvitation(tenant.id, invitee.id);
    const first = tokenFromLink((await waitFor(() => stub.sends.find((s) => s.body.to === invitee.email))).body.body, 'setup-password');
    await service.sendInvitation(tenant.id, invitee.id);
    const second = tokenFromLink(
      (await waitFor(() => stub.sends.filter((s) => s.body.to === invitee.email)[1])).body.body,
      'setup-password',
    );
    const [row] = await t.app.get(DataSource).query('SELECT expires_at FROM auth_tokens WHERE token_hash = $1', [hashToken(second)]);
    expect((new Date(row.expires_at).getTime() - Date.now()) / 3_600_000).toBeGreaterThan(47.9);
    await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token: first, password: 'my-first-pass' })
      .expect(400);
    await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token: second, password: 'my-first-pass' })
      .expect(200);
    await login(t, invitee.email, 'my-first-pass');
    await expect(service.sendInvitation(tenant.id, invitee.id)).rejects.toMatchObject({ status: 409 });
  });

  it('a failing mail-api is retried until it accepts, and the message is sent once', async () => {
    const user = await f.user(tenant, { roleIds: [roleId] });
    stub.failNext(2, 503);
    await resetRequest(user.email).expect(200);
    const queue = t.app.get(QueueService).queue(AccountEmailQueue);
    const sendJob = await waitFor(async () => {
      const jobs = await queue.getJobs(['completed']);
      return jobs.find((j) => j.name === AccountEmailJob.Send && j.data.to === user.email);
    }, 25_000);
    expect(sendJob.attemptsMade).toBe(3);
    expect(stub.sends.filter((s) => s.body.to === user.email)).toHaveLength(1);
  }, 30_000);
});
