import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { startInProcessWorker, waitFor } from '@app/service-kit/testing';
import { WorkerModule } from '../src/worker.module.js';
import { Factories, login, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const MAIL_KEY = `sk_${randomBytes(24).toString('hex')}`;
const APP_URL = 'http://app.example.test';

interface RecordedSend {
  headers: http.IncomingHttpHeaders;
  body: { to: string; from: string; subject: string; body: string };
}

/** Plays the mail-api: records every `POST /v1/send` and answers like the real service. */
async function startMailApi() {
  const sends: RecordedSend[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/send') return void res.writeHead(404).end();
      sends.push({ headers: req.headers, body: JSON.parse(raw) });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ success: true, data: { id: randomUUID(), timestamp: new Date().toISOString() } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sends,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('invitations: POST /auth/users without a password, POST /auth/users/resend-invite', () => {
  let mail: Awaited<ReturnType<typeof startMailApi>>;
  let t: PlatformTestApp;
  let worker: INestApplicationContext;
  let f: Factories;
  let ds: DataSource;
  let tenant: { id: string; organizationId: string };
  let admin: { Authorization: string };
  let memberRole: { id: string };

  beforeAll(async () => {
    mail = await startMailApi();
    t = await startPlatformApp({
      env: {
        PLATFORM_MAIL_API_URL: mail.url,
        PLATFORM_MAIL_API_KEY: MAIL_KEY,
        PLATFORM_MAIL_FROM: 'accounts@example.com',
        PLATFORM_APP_URL: APP_URL,
      },
    });
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config));
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenant = await f.tenant();
    admin = (await f.loggedInUser(t, { features: ['auth.users.*', 'crm.*'] }, tenant)).auth;
    memberRole = await f.role(tenant.id, { features: ['crm.contacts.view'] });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await mail.close();
  });

  const api = () => request(t.url);
  const emailsTo = (to: string) => mail.sends.filter((s) => s.body.to === to);
  const nthEmailTo = (to: string, n: number) => waitFor(() => emailsTo(to)[n]);
  const setupToken = (sent: RecordedSend) => {
    const match = sent.body.body.match(new RegExp(`${APP_URL}/setup-password\\?token=([^"&\\s]+)`));
    if (!match) throw new Error(`no setup link in ${sent.body.body}`);
    return decodeURIComponent(match[1]);
  };
  const confirm = (token: string, password: string) =>
    api().post('/auth/reset/confirm').set('X-Forwarded-For', testIp()).type('form').send({ token, password });
  const resend = (id: string, ip = testIp()) => api().post('/auth/users/resend-invite').set(admin).set('X-Forwarded-For', ip).send({ id });

  it('end to end: the invitation goes through the mail-api, the setup token sets the password once, login works', async () => {
    const created = await api()
      .post('/auth/users')
      .set(admin)
      .send({ email: 'Invitee@Example.com', roleIds: [memberRole.id] })
      .expect(201);

    const sent = await nthEmailTo('invitee@example.com', 0);
    expect(sent.headers.authorization).toBe(`Bearer ${MAIL_KEY}`);
    expect(sent.headers['idempotency-key']).toEqual(expect.stringMatching(/^platform-invitation-[0-9a-f-]{36}$/));
    expect(sent.body.from).toBe('accounts@example.com');
    const token = setupToken(sent);

    const listed = await api().get('/auth/users').query({ id: created.body.id }).set(admin).expect(200);
    expect(listed.body.items[0].hasPassword).toBe(false);

    await confirm(token, 'my-chosen-password').expect(200, { ok: true, redirect: '/login' });
    const session = await login(t, 'invitee@example.com', 'my-chosen-password');
    await api().get('/auth/profile').set('Authorization', `Bearer ${session}`).expect(200);

    const reused = await confirm(token, 'another-password').expect(400);
    expect(reused.body).toEqual({ ok: false, error: 'invalid or expired token' });
    await login(t, 'invitee@example.com', 'my-chosen-password');
    expect((await api().get('/auth/users').query({ id: created.body.id }).set(admin).expect(200)).body.items[0].hasPassword).toBe(true);

    // Now it has a password: no more invitations.
    const conflict = await resend(created.body.id).expect(409);
    expect(conflict.body).toEqual({ error: 'user already has a password' });
  });

  it('resend-invite: 200 {ok: true}, a new email and token; the earlier token no longer works', async () => {
    const created = await api()
      .post('/auth/users')
      .set(admin)
      .send({ email: 'twice@example.com', roleIds: [memberRole.id] })
      .expect(201);
    const first = setupToken(await nthEmailTo('twice@example.com', 0));

    await resend(created.body.id).expect(200, { ok: true });
    const secondEmail = await nthEmailTo('twice@example.com', 1);
    const second = setupToken(secondEmail);
    expect(second).not.toBe(first);
    expect(secondEmail.headers['idempotency-key']).not.toBe(emailsTo('twice@example.com')[0].headers['idempotency-key']);

    const stale = await confirm(first, 'password-from-old-link').expect(400);
    expect(stale.body).toEqual({ ok: false, error: 'invalid or expired token' });
    await confirm(second, 'password-from-new-link').expect(200);
    await login(t, 'twice@example.com', 'password-from-new-link');
  });

  it('409 for a user who already has a password (no email sent)', async () => {
    const user = await f.user(tenant, { roleIds: [memberRole.id] });
    const res = await resend(user.id).expect(409);
    expect(res.body).toEqual({ error: 'user already has a password' });
    expect((await ds.query('SELECT 1 FROM auth_tokens WHERE user_id = $1', [user.id])).length).toBe(0);
  });

  it('404 for an unknown user, a deleted user, or a user of another tenant; 400 for a malformed id', async () => {
    await resend(randomUUID()).expect(404, { error: 'user not found' });
    const gone = await f.user(tenant, { password: null });
    await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [gone.id]);
    await resend(gone.id).expect(404, { error: 'user not found' });
    const other = await f.tenant();
    const foreign = await f.user(other, { password: null });
    await resend(foreign.id).expect(404, { error: 'user not found' });
    expect((await ds.query('SELECT 1 FROM auth_tokens WHERE user_id = $1', [foreign.id])).length).toBe(0);
    const invalid = await resend('not-a-uuid').expect(400);
    expect(invalid.body.error).toMatch(/^validation failed: id/);
    await api().post('/auth/users/resend-invite').set(admin).send({}).expect(400);
  });

  it('400 "invalid request origin" for an Origin outside the allowed origins; the app’s own origin is fine', async () => {
    const invitee = await f.user(tenant, { password: null });
    const res = await api()
      .post('/auth/users/resend-invite')
      .set(admin)
      .set('Origin', 'https://evil.example')
      .set('X-Forwarded-For', testIp())
      .send({ id: invitee.id })
      .expect(400);
    expect(res.body).toEqual({ error: 'invalid request origin' });
    expect((await ds.query('SELECT 1 FROM auth_tokens WHERE user_id = $1', [invitee.id])).length).toBe(0);
    await api()
      .post('/auth/users/resend-invite')
      .set(admin)
      .set('Origin', APP_URL)
      .set('X-Forwarded-For', testIp())
      .send({ id: invitee.id })
      .expect(200);
  });

  it('rate limit: 3 per 300 s per client IP, then 429 {error} with Retry-After; another IP is unaffected', async () => {
    const invitee = await f.user(tenant, { password: null });
    const ip = testIp();
    for (let i = 0; i < 3; i += 1) await resend(invitee.id, ip).expect(200);
    const limited = await resend(invitee.id, ip).expect(429);
    expect(limited.body).toEqual({ error: expect.any(String) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(300);
    // The limit is per IP, not per target: another user from the same IP is limited too.
    const other = await f.user(tenant, { password: null });
    await resend(other.id, ip).expect(429);
    await resend(invitee.id, testIp()).expect(200);
  });

  it('401 without a token, 403 without auth.users.create', async () => {
    const invitee = await f.user(tenant, { password: null });
    await api().post('/auth/users/resend-invite').send({ id: invitee.id }).expect(401);
    const { auth } = await f.loggedInUser(t, { features: ['auth.users.edit', 'auth.users.list'] }, tenant);
    await api().post('/auth/users/resend-invite').set(auth).send({ id: invitee.id }).expect(403);
  });
});
