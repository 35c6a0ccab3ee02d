import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { startInProcessWorker } from '@app/service-kit/testing';
import { NotificationsQueue } from '../src/modules/notifications/notifications.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { processEnv, startApiProcess, type ApiProcess } from './support/app-process.js';
import { Factories, login } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;

/**
 * GET /notifications/unread-count is answered from a per-user count kept in process (issue #18).
 * Every change must reach it: on this instance at once, on the others (another API, the worker's
 * fan-outs) through Redis; and a notification that expires stops counting without any write.
 */
describe('notifications: the cached unread count', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenant: { id: string; organizationId: string };
  let sender: Auth;
  let worker: INestApplicationContext;
  let b: ApiProcess;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenant = await f.tenant();
    sender = (await f.loggedInUser(t, { features: ['notifications.create'] }, tenant)).auth;
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config), { queues: [NotificationsQueue] });
    b = await startApiProcess('B', processEnv(t.config));
    await b.ready;
  }, 60_000);
  afterAll(async () => {
    await b?.kill('SIGTERM');
    await worker?.close();
    await t?.close();
  });

  const unread = async (auth: Auth, url = t.url) =>
    (await request(url).get('/notifications/unread-count').set(auth).expect(200)).body.unreadCount as number;
  const notify = async (recipientUserId: string, fields: object = {}) =>
    (
      await request(t.url)
        .post('/notifications')
        .set(sender)
        .send({ type: 'cache.test', severity: 'info', title: 'Hi', recipientUserId, actions: [{ id: 'ok', label: 'OK' }], ...fields })
        .expect(201)
    ).body.id as string;
  const put = (auth: Auth, id: string, op: string, body?: object) =>
    request(t.url)
      .put(`/notifications/${id}/${op}`)
      .set(auth)
      .send(body ?? {});
  const dbCount = async (userId: string) =>
    Number(
      (
        await ds.query(
          `SELECT count(*) AS n FROM notifications WHERE recipient_user_id = $1 AND status = 'unread' AND (expires_at IS NULL OR expires_at > now())`,
          [userId],
        )
      )[0].n,
    );
  /** Polls instance `url` until the badge shows `expected` (another instance learns through Redis). */
  const eventually = async (auth: Auth, expected: number, url: string) => {
    const deadline = Date.now() + 5000;
    for (let last = await unread(auth, url); last !== expected; last = await unread(auth, url)) {
      if (Date.now() > deadline) throw new Error(`unread count stayed ${last}, expected ${expected}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  it('follows every change on the instance that made it, at once', async () => {
    const u = await f.loggedInUser(t, { features: [] }, tenant);
    expect(await unread(u.auth)).toBe(0); // cached from here on
    const [a, b2, c] = [await notify(u.user.id), await notify(u.user.id), await notify(u.user.id)];
    expect(await unread(u.auth)).toBe(3);
    await put(u.auth, a, 'read').expect(200);
    expect(await unread(u.auth)).toBe(2);
    await put(u.auth, b2, 'dismiss').expect(200);
    expect(await unread(u.auth)).toBe(1);
    await put(u.auth, b2, 'restore', { status: 'unread' }).expect(200);
    expect(await unread(u.auth)).toBe(2);
    await request(t.url).post(`/notifications/${c}/action`).set(u.auth).send({ actionId: 'ok' }).expect(201);
    expect(await unread(u.auth)).toBe(1);
    await request(t.url).put('/notifications/mark-all-read').set(u.auth).expect(200);
    expect(await unread(u.auth)).toBe(0);
    await request(t.url)
      .post('/notifications/batch')
      .set(sender)
      .send({ type: 'x', severity: 'info', recipientUserIds: [u.user.id] })
      .expect(201);
    expect(await unread(u.auth)).toBe(1);
    expect(await dbCount(u.user.id)).toBe(1);
  });

  it('is per user: another user’s changes leave it alone, its own are not shown to others', async () => {
    const u = await f.loggedInUser(t, { features: [] }, tenant);
    const v = await f.loggedInUser(t, { features: [] }, tenant);
    await notify(u.user.id);
    expect([await unread(u.auth), await unread(v.auth)]).toEqual([1, 0]);
    await request(t.url).put('/notifications/mark-all-read').set(v.auth).expect(200);
    expect([await unread(u.auth), await unread(v.auth)]).toEqual([1, 0]);
  });

  it('a notification stops counting when it expires, with no write to announce it', async () => {
    const u = await f.loggedInUser(t, { features: [] }, tenant);
    await notify(u.user.id);
    await notify(u.user.id, { expiresAt: new Date(Date.now() + 2500).toISOString() });
    expect(await unread(u.auth)).toBe(2);
    await eventually(u.auth, 1, t.url);
    expect(await dbCount(u.user.id)).toBe(1);
  });

  it('a role fan-out written by the worker reaches the badge the API had cached', async () => {
    const role = await f.role(tenant.id, { features: [] });
    const member = await f.user(tenant, { roleIds: [role.id] });
    const auth = { Authorization: `Bearer ${await login(t, member.email, member.password)}` };
    expect(await unread(auth)).toBe(0);
    const res = await request(t.url)
      .post('/notifications/role')
      .set(sender)
      .send({ type: 'fan', severity: 'info', title: 'To the role', roleId: role.id })
      .expect(201);
    expect(res.body.count).toBe(1);
    await eventually(auth, 1, t.url);
    expect(await t.app.get(QueueService).queue(NotificationsQueue).getJob(`fanout-${res.body.batchId}`)).toBeTruthy();
  });

  it('a change made through instance A reaches the count instance B had cached', async () => {
    const u = await f.loggedInUser(t, { features: [] }, tenant);
    const id = await notify(u.user.id);
    expect(await unread(u.auth, b.url)).toBe(1); // B caches it
    await put(u.auth, id, 'read').expect(200); // through A
    await eventually(u.auth, 0, b.url);
    await notify(u.user.id); // through A
    await eventually(u.auth, 1, b.url);
  });

  it('a profile email change through instance A reaches instance B, which had the session cached', async () => {
    const u = await f.loggedInUser(t, { features: [] }, tenant);
    const profileOn = async (url: string) => (await request(url).get('/auth/profile').set(u.auth).expect(200)).body.email as string;
    expect(await profileOn(b.url)).toBe(u.user.email);
    const email = `moved-${u.user.id.slice(0, 8)}@example.com`;
    await request(t.url).put('/auth/profile').set(u.auth).send({ email, currentPassword: u.user.password }).expect(200);
    const deadline = Date.now() + 5000;
    while ((await profileOn(b.url)) !== email) {
      if (Date.now() > deadline) throw new Error('instance B kept the old email');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });
});
