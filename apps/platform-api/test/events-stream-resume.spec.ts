import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { EventBus, type EmittedEvent } from '../src/core/events/event-bus.service.js';
import { JOURNAL_MAX_EVENTS } from '../src/core/events/event-journal.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { secondInstance, streamAudience } from './support/stream-audience.js';
import { connectSse, type SseClient, type SseFrame } from './support/sse-client.js';

type Auth = Record<string, string>;

/**
 * Issue #32 item 4: GET /events/stream gives every event an `id:` and honours `Last-Event-ID`: what was
 * published while the client was away (5 minutes or 1,000 events per tenant, kept in Redis) is replayed
 * in order and once, across instances; an older gap gets one `event: reset`.
 */
describe('events: resuming GET /events/stream with Last-Event-ID', () => {
  let a: PlatformTestApp;
  let b: NestExpressApplication;
  let bUrl: string;
  let tenant: { id: string; organizationId: string };
  let sender: Auth;
  let alice: { auth: Auth; id: string };
  let bob: { auth: Auth; id: string };
  let outsider: { auth: Auth; id: string };
  const clients: SseClient[] = [];

  beforeAll(async () => {
    a = await startPlatformApp();
    ({ b, bUrl } = await secondInstance(a));
    ({ tenant, sender, alice, bob, outsider } = await streamAudience(a));
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const open = async (auth: Auth, headers: Auth = {}, url = bUrl, path = '/events/stream') => {
    const client = await connectSse(url, path, { ...auth, ...headers });
    clients.push(client);
    expect(client.status).toBe(200);
    await client.next((fr) => fr.kind === 'comment' && fr.text === 'connected');
    return client;
  };
  const notify = async (auth: Auth, recipientUserId: string, title: string, url: string = a.url) =>
    (
      await request(url)
        .post('/notifications')
        .set(auth)
        .send({ type: 'resume.test', severity: 'info', title, recipientUserId })
        .expect(201)
    ).body.id as string;
  const created = (notificationId: string) => (fr: SseFrame) =>
    fr.kind === 'data' && fr.data?.id === 'notifications.notification.created' && fr.data.payload.id === notificationId;
  const dataFrames = (c: SseClient) => c.frames.filter((fr) => fr.kind === 'data');
  const createdIds = (c: SseClient) =>
    dataFrames(c)
      .filter((fr) => fr.data!.id === 'notifications.notification.created')
      .map((fr) => fr.data!.payload.id as string);
  const idOrder = (id: string) => id.split('-').map(Number) as [number, number];
  const increasing = (ids: string[]) =>
    ids.every(
      (id, i) =>
        i === 0 ||
        idOrder(id)[0] > idOrder(ids[i - 1])[0] ||
        (idOrder(id)[0] === idOrder(ids[i - 1])[0] && idOrder(id)[1] > idOrder(ids[i - 1])[1]),
    );

  it('disconnect, 10 events published on the other instance, reconnect with the last id: exactly those 10, in order, then live ones once', async () => {
    const first = await open(alice.auth);
    const seen = await first.next(created(await notify(sender, alice.id, 'before')));
    expect(seen.id).toMatch(/^\d+-\d+$/);
    expect(first.raw()).toContain(`id: ${seen.id}\ndata: ${seen.text}\n\n`);
    first.close();

    const missed: string[] = [];
    for (let i = 0; i < 10; i++) {
      missed.push(await notify(sender, alice.id, `missed ${i}`));
      // Interleaved: events of the tenant alice may not see, and of another tenant.
      if (i % 3 === 0) await notify(sender, bob.id, `for bob ${i}`);
      if (i % 4 === 0) await notify(outsider.auth, outsider.id, `other tenant ${i}`);
    }

    const resumed = await open(alice.auth, { 'Last-Event-ID': seen.id! });
    await resumed.next(created(missed[9]));
    const live = await notify(sender, alice.id, 'live after resume', bUrl);
    await resumed.next(created(live));
    expect(createdIds(resumed)).toEqual([...missed, live]);
    const ids = dataFrames(resumed).map((fr) => fr.id!);
    expect(increasing([seen.id!, ...ids])).toBe(true);
    expect(dataFrames(resumed).some((fr) => fr.event === 'reset')).toBe(false);
  });

  it('?lastEventId= works as the header does (for clients that cannot set it); nothing missed replays nothing', async () => {
    const first = await open(alice.auth);
    const seen = await first.next(created(await notify(sender, alice.id, 'query resume')));
    first.close();
    const missed = await notify(sender, alice.id, 'query missed');
    const resumed = await open(alice.auth, {}, bUrl, `/events/stream?lastEventId=${encodeURIComponent(seen.id!)}`);
    await resumed.next(created(missed));
    expect(createdIds(resumed)).toEqual([missed]);

    const upToDate = await open(alice.auth, { 'Last-Event-ID': resumed.frames.at(-1)!.id! });
    const marker = await notify(sender, alice.id, 'marker');
    await upToDate.next(created(marker));
    expect(createdIds(upToDate)).toEqual([marker]);
  });

  it('events emitted concurrently on both instances reach a stream with increasing ids (one order for every listener)', async () => {
    const onA = await open(alice.auth, {}, a.url);
    const onB = await open(alice.auth);
    const burst = (bus: EventBus, tag: string) =>
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          bus.emit({
            id: 'notifications.notification.created',
            tenantId: tenant.id,
            organizationId: tenant.organizationId,
            recipientUserId: alice.id,
            payload: { id: `${tag}-${i}` },
          }),
        ),
      );
    await Promise.all([burst(a.app.get(EventBus), 'a'), burst(b.get(EventBus), 'b')]);
    await Promise.all([onA.next(created('a-19')), onA.next(created('b-19')), onB.next(created('a-19')), onB.next(created('b-19'))]);
    for (const stream of [onA, onB]) {
      const ids = dataFrames(stream).map((fr) => fr.id!);
      expect(ids).toHaveLength(40);
      expect(increasing(ids)).toBe(true);
    }
    expect(createdIds(onA)).toEqual(createdIds(onB));
  });

  it(`a gap of more than ${JOURNAL_MAX_EVENTS} events of the tenant gets one \`event: reset\` (with an id to carry on from), then live events`, async () => {
    const first = await open(alice.auth);
    const seen = await first.next(created(await notify(sender, alice.id, 'before the flood')));
    first.close();
    const flood: EmittedEvent[] = Array.from({ length: JOURNAL_MAX_EVENTS + 1 }, (_, i) => ({
      id: 'notifications.notification.created',
      tenantId: tenant.id,
      organizationId: tenant.organizationId,
      recipientUserId: bob.id,
      payload: { id: `flood-${i}` },
    }));
    await a.app.get(EventBus).emitMany(flood);

    const resumed = await open(alice.auth, { 'Last-Event-ID': seen.id! });
    const reset = await resumed.next((fr) => fr.event === 'reset');
    expect(reset.id).toMatch(/^\d+-\d+$/);
    const live = await notify(sender, alice.id, 'after the reset');
    await resumed.next(created(live));
    expect(dataFrames(resumed).map((fr) => fr.event ?? fr.data!.payload.id)).toEqual(['reset', live]);
    expect(resumed.raw()).toContain(`event: reset\nid: ${reset.id}\ndata: {}\n\n`);

    // Resuming from the reset's id replays nothing older.
    const again = await open(alice.auth, { 'Last-Event-ID': reset.id! });
    const marker = await notify(sender, alice.id, 'after the reset, again');
    await again.next(created(marker));
    expect(createdIds(again)).toEqual([live, marker]);
  });

  it('an id older than 5 minutes or a malformed one gets a reset; a resume replays only the caller’s tenant', async () => {
    const stale = await open(alice.auth, { 'Last-Event-ID': `${Date.now() - 6 * 60_000}-0` });
    await stale.next((fr) => fr.event === 'reset');
    const garbage = await open(alice.auth, { 'Last-Event-ID': 'x'.repeat(5000) });
    await garbage.next((fr) => fr.event === 'reset');
    expect(dataFrames(stale)).toHaveLength(1);
    expect(dataFrames(garbage)).toHaveLength(1);

    // The outsider's stream resumes from an old id of alice's tenant: it replays its own tenant only.
    const outsiderFirst = await open(outsider.auth);
    const own = await outsiderFirst.next(created(await notify(outsider.auth, outsider.id, 'outsider before')));
    outsiderFirst.close();
    await notify(sender, alice.id, 'not for the outsider');
    const ownMissed = await notify(outsider.auth, outsider.id, 'outsider missed');
    const resumed = await open(outsider.auth, { 'Last-Event-ID': own.id! });
    await resumed.next(created(ownMissed));
    expect(createdIds(resumed)).toEqual([ownMissed]);
  });
});
