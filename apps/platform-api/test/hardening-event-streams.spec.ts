import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { listen } from '@app/service-kit';
import { createPlatformHttpApp } from '../src/http-setup.js';
import { EventStreamService, MAX_STREAMS_PER_USER } from '../src/modules/platform-events/event-stream.service.js';
import { Factories, login } from './support/factories.js';
import { waitFor } from './support/mail-api-stub.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { connectSse, type SseClient } from './support/sse-client.js';

type Auth = Record<string, string>;

/**
 * Issue #11 item 9: GET /events/stream is capped per user and instance, and a session's streams end
 * when the session does (logout, a password change elsewhere, a deactivated tenant), on every instance.
 */
describe('event stream hardening', () => {
  let a: PlatformTestApp;
  let b: NestExpressApplication;
  let bUrl: string;
  let f: Factories;
  let tenant: { id: string; organizationId: string };
  let roleId: string;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    a = await startPlatformApp();
    b = await createPlatformHttpApp(a.config);
    bUrl = await listen(b, 0, '127.0.0.1');
    f = Factories.of(a);
    tenant = await f.tenant();
    roleId = (await f.role(tenant.id, { features: [] })).id;
    // Frequent heartbeats: a stream that still receives one after an event is provably still open.
    for (const streams of [a.app.get(EventStreamService), b.get(EventStreamService)]) streams.heartbeatIntervalMs = 50;
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await b.close();
    await a.close();
  });

  const connect = async (auth: Auth, url = bUrl) => {
    const client = await connectSse(url, '/events/stream', auth);
    clients.push(client);
    return client;
  };
  const open = async (auth: Auth, url = bUrl) => {
    const client = await connect(auth, url);
    expect(client.status).toBe(200);
    await client.next((fr) => fr.kind === 'comment' && fr.text === 'connected');
    return client;
  };
  const bearer = (token: string): Auth => ({ Authorization: `Bearer ${token}` });
  const newUser = () => f.user(tenant, { roleIds: [roleId] });
  /** The server ends the response (bounded, so a stream that stays open fails the test with a clear message). */
  const ended = (...streams: SseClient[]) =>
    Promise.race([
      Promise.all(streams.map((c) => c.ended)),
      new Promise((_, reject) => setTimeout(() => reject(new Error('the stream is still open')), 10_000).unref()),
    ]);
  const stillOpen = async (client: SseClient) => {
    const seen = client.frames.length;
    await client.next((fr) => fr.kind === 'comment' && fr.text === 'heartbeat' && client.frames.indexOf(fr) >= seen);
  };

  it(`answers 429 {error} past ${MAX_STREAMS_PER_USER} open streams of one user on one instance; a closed one frees its slot`, async () => {
    const user = await newUser();
    const auth = bearer(await login(a, user.email, user.password));
    const streams = [];
    for (let i = 0; i < MAX_STREAMS_PER_USER; i += 1) streams.push(await open(auth));
    const refused = await connect(auth);
    expect(refused.status).toBe(429);
    await ended(refused);
    expect(JSON.parse(refused.raw())).toEqual({ error: 'too many open event streams' });

    // Another session of the same user counts too; another user and another instance do not.
    const again = await connect(bearer(await login(a, user.email, user.password)));
    expect(again.status).toBe(429);
    const someoneElse = await newUser();
    await open(bearer(await login(a, someoneElse.email, someoneElse.password)));
    await open(auth, a.url);

    streams[0].close();
    await waitFor(async () => ((await connect(auth)).status === 200 ? true : null));
  });

  it('logout on instance A ends the streams of that session on both instances; the user’s other session keeps its stream', async () => {
    const user = await newUser();
    const token = await login(a, user.email, user.password);
    const otherSession = await open(bearer(await login(a, user.email, user.password)));
    const onB = await open(bearer(token));
    const onA = await open(bearer(token), a.url);
    await request(a.url).post('/auth/logout').set(bearer(token)).expect(302);
    await ended(onB, onA);
    await stillOpen(otherSession);
    await waitFor(() =>
      b.get(EventStreamService).openStreamsOf(user.id) === 1 && a.app.get(EventStreamService).openStreamsOf(user.id) === 0 ? true : null,
    );
  });

  it('a password change ends the streams of the user’s other sessions, not of the session that made it', async () => {
    const user = await newUser();
    const mine = await login(a, user.email, user.password);
    const elsewhere = await open(bearer(await login(a, user.email, user.password)));
    const own = await open(bearer(mine));
    await request(a.url)
      .put('/auth/profile')
      .set(bearer(mine))
      .send({ password: 'another-pass-1', currentPassword: user.password })
      .expect(200);
    await ended(elsewhere);
    await stillOpen(own);
  });

  it('deactivating the tenant ends its users’ streams on every instance', async () => {
    const admin = await f.loggedInUser(a, { isSuperAdmin: true });
    const other = await f.tenant();
    const otherRole = await f.role(other.id, { features: [] });
    const member = await f.user(other, { roleIds: [otherRole.id] });
    const auth = bearer(await login(a, member.email, member.password));
    const [onA, onB] = [await open(auth, a.url), await open(auth)];
    await request(a.url).put('/directory/tenants').set(admin.auth).send({ id: other.id, isActive: false }).expect(200);
    await ended(onA, onB);
  });
});
