import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { MailProjectCredentials, MailTrackedEvent } from '@app/contracts';
import { bearer, createProject, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('mail POST /v1/track and events', () => {
  let t: MailTestApp;
  let p: MailProjectCredentials;
  const track = (body: object, key = p.publicKey) => request(t.url).post('/v1/track').set(bearer(key)).send(body);
  const contact = async (id: string) => (await request(t.url).get(`/contacts/${id}`).set(bearer(p.secretKey)).expect(200)).body;

  beforeAll(async () => {
    t = await startMailApp();
    p = await createProject(t, 'Tracking');
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates the contact (subscribed) and records the event; answers {success, data: {contact, event, timestamp}}', async () => {
    const res = await track({
      email: 'Lin@Example.com',
      event: 'signed-up',
      data: { plan: 'trial', source: { value: 'ad-42', persistent: false } },
    }).expect(200);
    expect(res.body).toEqual({
      success: true,
      data: { contact: expect.stringMatching(UUID), event: expect.stringMatching(UUID), timestamp: expect.stringMatching(ISO) },
    });
    expect(Math.abs(Date.parse(res.body.data.timestamp) - Date.now())).toBeLessThan(60_000);
    expect(await contact(res.body.data.contact)).toEqual({
      id: res.body.data.contact,
      email: 'Lin@Example.com',
      subscribed: true,
      data: { plan: 'trial' },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const events = await request(t.url).get(`/events?contactId=${res.body.data.contact}`).set(bearer(p.secretKey)).expect(200);
    expect(events.body).toEqual({
      items: [
        {
          id: res.body.data.event,
          name: 'signed-up',
          contact: { id: res.body.data.contact, email: 'Lin@Example.com' },
          data: { plan: 'trial', source: 'ad-42' },
          createdAt: res.body.data.timestamp,
        },
      ],
      nextCursor: null,
      hasMore: false,
      total: 1,
    });
  });

  it('then updates that contact: persistent data merged, null deletes, flag kept unless given', async () => {
    const first = await track({ email: 'mo@example.com', event: 'signed-up', subscribed: false, data: { plan: 'trial', seats: 2 } }).expect(
      200,
    );
    const id = first.body.data.contact;
    expect(await contact(id)).toMatchObject({ subscribed: false, data: { plan: 'trial', seats: 2 } });

    const second = await track(
      { email: 'MO@example.com', event: 'upgraded', data: { plan: 'pro', seats: null, coupon: { value: 'X1', persistent: false } } },
      p.secretKey,
    ).expect(200);
    expect(second.body.data.contact).toBe(id);
    expect(second.body.data.event).not.toBe(first.body.data.event);
    const updated = await contact(id);
    expect(updated).toMatchObject({ email: 'mo@example.com', subscribed: false, data: { plan: 'pro' } });

    // Nothing to change: the contact is not written (updatedAt stays), the event is still recorded.
    const third = await track({
      email: 'mo@example.com',
      event: 'page-viewed',
      data: { plan: 'pro', path: { value: '/home', persistent: false } },
    }).expect(200);
    expect(third.body.data.contact).toBe(id);
    expect(await contact(id)).toEqual(updated);

    await track({ email: 'mo@example.com', event: 'resubscribed', subscribed: true }, p.secretKey).expect(200);
    expect(await contact(id)).toMatchObject({ subscribed: true, data: { plan: 'pro' } });

    const events = await request(t.url).get('/events?email=Mo@Example.com').set(bearer(p.secretKey)).expect(200);
    expect(events.body.items.map((e: MailTrackedEvent) => [e.name, e.data])).toEqual([
      ['resubscribed', {}],
      ['page-viewed', { plan: 'pro', path: '/home' }],
      ['upgraded', { plan: 'pro', seats: null, coupon: 'X1' }],
      ['signed-up', { plan: 'trial', seats: 2 }],
    ]);
  });

  it('concurrent tracks of one new email create one contact and every event', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => track({ email: 'burst@example.com', event: 'burst', data: { [`k${i}`]: i } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.data.contact)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.data.event)).size).toBe(20);
    const c = await contact(results[0].body.data.contact);
    expect(c.data).toEqual(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])));
    const events = await request(t.url).get('/events?name=burst&limit=100').set(bearer(p.secretKey)).expect(200);
    expect(events.body.total).toBe(20);
  });

  it('reserved event names and invalid bodies are 422', async () => {
    for (const event of ['email.opened', 'contact.created', 'Email.Clicked', 'CONTACT.x']) {
      expectValidationError(await track({ email: 'a@example.com', event }), [
        { field: 'event', code: 'isNotReservedEventName', message: 'event names starting with "email." or "contact." are reserved' },
      ]);
    }
    expectValidationError(await track({}), [
      { field: 'email', code: 'isEmail' },
      { field: 'email', code: 'maxLength' },
      { field: 'event', code: 'isString' },
      { field: 'event', code: 'isNotEmpty' },
      { field: 'event', code: 'maxLength' },
    ]);
    expectValidationError(await track({ email: 'a@example.com', event: '  ' }), [{ field: 'event', code: 'isNotEmpty' }]);
    expectValidationError(await track({ email: 'a@example.com', event: 'x'.repeat(129) }), [{ field: 'event', code: 'maxLength' }]);
    expectValidationError(await track({ email: 'a@example.com', event: 'a\u0000b' }), [
      { field: 'event', code: 'hasNoNulCharacter', message: 'event must not contain NUL characters' },
    ]);
    expectValidationError(await track({ email: 'a@example.com', event: 'ok', subscribed: 'true', data: { a: [1] } }), [
      { field: 'subscribed', code: 'isBoolean' },
      { field: 'data', code: 'isContactData', message: 'data.a must be a string, number, boolean, null or {value, persistent}' },
    ]);
    const names = await request(t.url).get('/events/names?limit=100').set(bearer(p.secretKey)).expect(200);
    expect(names.body.items.map((n: { name: string }) => n.name)).not.toContain('email.opened');
  });

  describe('GET /events and GET /events/names', () => {
    let q: MailProjectCredentials;
    const ids: Record<string, string> = {};
    let middle: string;

    beforeAll(async () => {
      q = await createProject(t, 'Events');
      for (const [i, [email, event]] of [
        ['a@example.com', 'viewed'],
        ['b@example.com', 'viewed'],
        ['a@example.com', 'clicked'],
        ['c@example.com', 'viewed'],
        ['b@example.com', 'bought'],
        ['a@example.com', 'viewed'],
      ].entries()) {
        const res = await request(t.url).post('/v1/track').set(bearer(q.publicKey)).send({ email, event, data: { i } }).expect(200);
        ids[email] = res.body.data.contact;
        if (i === 2) middle = res.body.data.timestamp;
        await new Promise((r) => setTimeout(r, 5)); // distinct timestamps for the time filter
      }
    });

    const list = async (query: string) => (await request(t.url).get(`/events?${query}`).set(bearer(q.secretKey)).expect(200)).body;
    const order = (body: { items: MailTrackedEvent[] }) => body.items.map((e) => e.data.i as number);

    it('lists newest first with total, filtered by name, contact, email and time', async () => {
      expect(order(await list(''))).toEqual([5, 4, 3, 2, 1, 0]);
      expect(await list('name=viewed')).toMatchObject({ total: 4, hasMore: false, nextCursor: null });
      expect(order(await list('name=viewed'))).toEqual([5, 3, 1, 0]);
      expect(order(await list(`contactId=${ids['a@example.com']}`))).toEqual([5, 2, 0]);
      expect(order(await list('email=B@EXAMPLE.COM'))).toEqual([4, 1]);
      expect(order(await list(`from=${encodeURIComponent(middle)}`))).toEqual([5, 4, 3, 2]);
      expect(order(await list(`to=${encodeURIComponent(middle)}`))).toEqual([1, 0]);
      expect(order(await list(`name=viewed&from=${encodeURIComponent(middle)}&email=a@example.com`))).toEqual([5]);
      expect(await list('name=nothing')).toEqual({ items: [], nextCursor: null, hasMore: false, total: 0 });
    });

    it('pages with nextCursor, no gaps or repeats', async () => {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const body: { items: MailTrackedEvent[]; nextCursor: string | null; hasMore: boolean; total: number } = await list(
          `limit=4${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(body.total).toBe(6);
        expect(body.hasMore).toBe(body.nextCursor !== null);
        seen.push(...order(body));
        cursor = body.nextCursor;
      } while (cursor);
      expect(seen).toEqual([5, 4, 3, 2, 1, 0]);
    });

    it('GET /events/names lists each name once, in name order, with counts; paged', async () => {
      const body = (await request(t.url).get('/events/names').set(bearer(q.secretKey)).expect(200)).body;
      expect(body).toEqual({
        items: [
          { name: 'bought', count: 1, lastTrackedAt: expect.stringMatching(ISO) },
          { name: 'clicked', count: 1, lastTrackedAt: middle },
          { name: 'viewed', count: 4, lastTrackedAt: expect.stringMatching(ISO) },
        ],
        nextCursor: null,
        hasMore: false,
        total: 3,
      });
      const page1 = (await request(t.url).get('/events/names?limit=2').set(bearer(q.secretKey)).expect(200)).body;
      expect(page1).toMatchObject({ hasMore: true, total: 3, nextCursor: expect.any(String) });
      const page2 = (await request(t.url).get(`/events/names?limit=2&cursor=${page1.nextCursor}`).set(bearer(q.secretKey)).expect(200))
        .body;
      expect([...page1.items, ...page2.items].map((n: { name: string }) => n.name)).toEqual(['bought', 'clicked', 'viewed']);
      expect(page2).toMatchObject({ hasMore: false, nextCursor: null });
    });

    it('invalid list queries are 422', async () => {
      const auth = bearer(q.secretKey);
      expectValidationError(await request(t.url).get('/events?contactId=nope').set(auth), [{ field: 'contactId', code: 'isUuid' }]);
      expectValidationError(await request(t.url).get('/events?from=yesterday').set(auth), [{ field: 'from', code: 'isIso8601' }]);
      expectValidationError(await request(t.url).get('/events?email=x').set(auth), [{ field: 'email', code: 'isEmail' }]);
      expectValidationError(await request(t.url).get('/events?limit=500').set(auth), [{ field: 'limit', code: 'max' }]);
      expectValidationError(await request(t.url).get('/events?cursor=abc').set(auth), [{ field: 'cursor', code: 'isCursor' }]);
      expectValidationError(await request(t.url).get('/events/names?limit=0').set(auth), [{ field: 'limit', code: 'min' }]);
      expectValidationError(await request(t.url).get('/events?name=a%00').set(auth), [{ field: 'name', code: 'hasNoNulCharacter' }]);
      const nulCursor = Buffer.from('a\u0000').toString('base64url');
      expectValidationError(await request(t.url).get(`/events/names?cursor=${nulCursor}`).set(auth), [
        { field: 'cursor', code: 'hasNoNulCharacter' },
      ]);
    });
  });
});
