import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { listen } from '@app/service-kit';
import { startInProcessWorker } from '@app/service-kit/testing';
import { EventBus } from '../src/core/events/event-bus.service.js';
import { createPlatformHttpApp } from '../src/http-setup.js';
import { EventStreamService } from '../src/modules/platform-events/event-stream.service.js';
import { WorkerModule } from '../src/worker.module.js';
import { Factories, login } from './support/factories.js';
import { waitFor } from './support/mail-api-stub.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { secondInstance, streamAudience } from './support/stream-audience.js';
import { connectSse, type SseClient, type SseFrame } from './support/sse-client.js';

type Auth = Record<string, string>;

/**
 * GET /events/stream with two API instances on one database and Redis (as two replicas behind a load
 * balancer) and a worker: events emitted on A or in the worker reach SSE clients connected to B.
 */
describe('events: GET /events/stream across instances', () => {
  let a: PlatformTestApp;
  let b: NestExpressApplication;
  let bUrl: string;
  let worker: INestApplicationContext;
  let f: Factories;
  let tenant: { id: string; organizationId: string };
  let sender: Auth;
  let alice: { auth: Auth; id: string };
  let bob: { auth: Auth; id: string };
  let outsider: { auth: Auth; id: string; sender: Auth };
  const clients: SseClient[] = [];

  const open = async (auth: Auth, url = bUrl) => {
    const client = await connectSse(url, '/events/stream', auth);
    clients.push(client);
    await client.next((fr) => fr.kind === 'comment' && fr.text === 'connected');
    return client;
  };
  const notify = async (auth: Auth, recipientUserId: string, title: string) =>
    (
      await request(a.url)
        .post('/notifications')
        .set(auth)
        .send({ type: 'stream.test', severity: 'info', title, recipientUserId })
        .expect(201)
    ).body.id as string;
  const createdFrame = (notificationId: string) => (fr: SseFrame) =>
    fr.kind === 'data' && fr.data?.id === 'notifications.notification.created' && fr.data.payload.id === notificationId;

  beforeAll(async () => {
    a = await startPlatformApp();
    ({ b, bUrl } = await secondInstance(a));
    worker = await startInProcessWorker(WorkerModule.forRoot(a.config));
    ({ f, tenant, sender, alice, bob, outsider } = await streamAudience(a));
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await worker.close();
    await b.close();
    await a.close();
  });

  it('401 without a token ({error} JSON, no stream)', async () => {
    const res = await request(bUrl).get('/events/stream').expect(401);
    expect(res.body).toEqual({ error: expect.any(String) });
  });

  it('starts with `: connected` as text/event-stream, and is documented', async () => {
    const client = await open(alice.auth);
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(client.headers['cache-control']).toContain('no-cache');
    expect(client.raw().startsWith(': connected\n\n')).toBe(true);
    client.close();
    const doc = (await request(a.url).get('/openapi.json').expect(200)).body;
    expect(doc.paths['/events/stream'].get.tags).toContain('events');
  });

  it('a notification created on instance A reaches its recipient’s stream on instance B, in the decisions.md format', async () => {
    const aliceStream = await open(alice.auth);
    const id = await notify(sender, alice.id, 'Hello from A');
    const frame = await aliceStream.next(createdFrame(id));
    expect(Object.keys(frame.data!).sort()).toEqual(['id', 'organizationId', 'payload', 'timestamp']);
    expect(frame.data).toEqual({
      id: 'notifications.notification.created',
      payload: expect.objectContaining({ id, title: 'Hello from A', status: 'unread', recipientUserId: alice.id }),
      timestamp: expect.any(Number),
      organizationId: tenant.organizationId,
    });
    expect(aliceStream.raw()).toContain(`data: ${frame.text}\n\n`);
  });

  it('filters to the recipient within the tenant, and to the tenant', async () => {
    const aliceStream = await open(alice.auth);
    const bobStream = await open(bob.auth);
    const outsiderStream = await open(outsider.auth);
    const forAlice = await notify(sender, alice.id, 'only alice');
    await aliceStream.next(createdFrame(forAlice));
    // Each stream receives the channel's events in order: once its own later event is in, an
    // earlier one it should have had would have come first.
    const forBob = await notify(sender, bob.id, 'only bob');
    await bobStream.next(createdFrame(forBob));
    const forOutsider = await notify(outsider.sender, outsider.id, 'other tenant');
    await outsiderStream.next(createdFrame(forOutsider));
    const notificationIds = (s: SseClient) => s.frames.filter((fr) => fr.kind === 'data').map((fr) => fr.data!.payload.id);
    expect(notificationIds(bobStream)).toEqual([forBob]);
    expect(notificationIds(outsiderStream)).toEqual([forOutsider]);
    expect(notificationIds(aliceStream)).toEqual([forAlice]);
  });

  it('sends only clientBroadcast events (a login in the tenant is not streamed)', async () => {
    const aliceStream = await open(alice.auth);
    const role = await f.role(tenant.id, { features: [] });
    const user = await f.user(tenant, { roleIds: [role.id] });
    await request(a.url).post('/auth/login').type('form').send({ email: user.email, password: user.password }).expect(200);
    const marker = await notify(sender, alice.id, 'marker');
    await aliceStream.next(createdFrame(marker));
    expect(aliceStream.frames.filter((fr) => fr.kind === 'data').map((fr) => fr.data!.id)).toEqual(['notifications.notification.created']);
  });

  it('events emitted by the worker (a role fan-out) reach streams on the API instances', async () => {
    const role = await f.role(tenant.id, { features: [] });
    const member = await f.user(tenant, { roleIds: [role.id] });
    const memberAuth = { Authorization: `Bearer ${await login(a, member.email, member.password)}` };
    const onB = await open(memberAuth);
    const onA = await open(memberAuth, a.url);
    const res = await request(a.url)
      .post('/notifications/role')
      .set(sender)
      .send({ type: 'fanout', severity: 'info', title: 'Everyone', roleId: role.id })
      .expect(201);
    expect(res.body.count).toBe(1);
    const isFanOut = (fr: SseFrame) => fr.kind === 'data' && fr.data!.payload.title === 'Everyone';
    const [fromB, fromA] = await Promise.all([onB.next(isFanOut, 20_000), onA.next(isFanOut, 20_000)]);
    expect(fromB.data!.payload.id).toBe(fromA.data!.payload.id);
  });

  it('sends `: heartbeat` comments while idle', async () => {
    const streams = b.get(EventStreamService);
    streams.heartbeatIntervalMs = 50;
    try {
      const client = await open(alice.auth);
      await client.next((fr) => fr.kind === 'comment' && fr.text === 'heartbeat');
      expect(client.raw()).toContain(': heartbeat\n\n');
    } finally {
      streams.heartbeatIntervalMs = 30_000;
    }
  });

  it('releases the listener when the client disconnects, and shares one Redis subscription per instance', async () => {
    const bus = b.get(EventBus);
    const streams = b.get(EventStreamService);
    for (const c of clients.splice(0)) c.close();
    await waitFor(() => (bus.listenerCount === 0 && streams.openStreams === 0 ? true : null));

    const redis = new Redis(a.config.redisUrl);
    const channel = `${a.config.queuePrefix}:events`;
    const subscribers = async () => Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]);
    try {
      const before = await subscribers();
      const many = await Promise.all([1, 2, 3, 4].map(() => open(alice.auth)));
      expect(bus.listenerCount).toBe(4);
      expect(await subscribers()).toBe(before);
      for (const c of many) c.close();
      await waitFor(() => (bus.listenerCount === 0 && streams.openStreams === 0 ? true : null));
    } finally {
      redis.disconnect();
    }
  });

  it('ends open streams when an instance shuts down', async () => {
    const c = await createPlatformHttpApp(a.config);
    const cUrl = await listen(c, 0, '127.0.0.1');
    const client = await connectSse(cUrl, '/events/stream', alice.auth);
    await client.next((fr) => fr.kind === 'comment' && fr.text === 'connected');
    await c.close();
    await client.ended;
    expect(c.get(EventBus).listenerCount).toBe(0);
  });
});
