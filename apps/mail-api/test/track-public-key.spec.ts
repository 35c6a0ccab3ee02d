import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { MailContact, MailProjectCredentials, MailTrackedEvent } from '@app/contracts';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

/**
 * decisions.md "Workflow and tracking safety": the public key (`pk_`, readable in any page's source)
 * cannot re-subscribe a contact who unsubscribed, nor rewrite or delete what campaigns print from the
 * contact's data; it sets the flag of a contact it creates and adds keys the contact lacks. The secret
 * key may do everything. Over HTTP, through the track batcher's one-call and set-based paths.
 */
describe('POST /v1/track with the public key (real Postgres)', () => {
  let t: MailTestApp;
  let p: MailProjectCredentials;
  const track = (key: string, body: object) => request(t.url).post('/v1/track').set(bearer(key)).send(body);
  const contact = async (id: string): Promise<MailContact> =>
    (await request(t.url).get(`/contacts/${id}`).set(bearer(p.secretKey)).expect(200)).body as MailContact;
  /** A contact as the secret key writes it (POST /contacts). */
  const existing = async (email: string, subscribed: boolean, data: Record<string, unknown>): Promise<string> => {
    const res = await request(t.url).post('/contacts').set(bearer(p.secretKey)).send({ email, subscribed, data });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  beforeAll(async () => {
    // Bursts of public-key calls from one address: the per-address budget is not what these tests are about.
    t = await startMailApp({ env: { MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE: '10000' } });
    p = await createProject(t, 'Public key');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('cannot re-subscribe, overwrite or delete a key; adds a key the contact lacks; the event records every value', async () => {
    const id = await existing('ada@example.com', false, { firstName: 'Ada', plan: 'pro' });
    const before = await contact(id);
    const res = await track(p.publicKey, {
      email: 'ADA@example.com',
      event: 'clicked-banner',
      subscribed: true,
      data: { firstName: 'Mallory', plan: null, city: 'Paris', ref: { value: 'ad', persistent: false } },
    });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { success: true, data: { contact: id, event: expect.any(String), timestamp: expect.any(String) } },
    });
    expect(await contact(id)).toEqual({
      ...before,
      subscribed: false,
      data: { firstName: 'Ada', plan: 'pro', city: 'Paris' },
      updatedAt: expect.any(String),
    });
    const events = await request(t.url).get(`/events?contactId=${id}`).set(bearer(p.secretKey)).expect(200);
    expect(events.body.items.map((e: MailTrackedEvent) => [e.name, e.data])).toEqual([
      ['clicked-banner', { firstName: 'Mallory', plan: null, city: 'Paris', ref: 'ad' }],
    ]);

    // Nothing it may change: the contact is left as it is.
    const after = await contact(id);
    await track(p.publicKey, { email: 'ada@example.com', event: 'again', subscribed: true, data: { firstName: 'Eve' } }).expect(200);
    expect(await contact(id)).toEqual(after);
  });

  it('sets the flag of a contact it creates (false when asked, true by default)', async () => {
    const quiet = await track(p.publicKey, { email: 'quiet@example.com', event: 'signed-up', subscribed: false, data: { a: 1 } });
    expect(quiet.status).toBe(200);
    expect(await contact(quiet.body.data.contact)).toMatchObject({ email: 'quiet@example.com', subscribed: false, data: { a: 1 } });
    const plain = await track(p.publicKey, { email: 'plain@example.com', event: 'signed-up' });
    expect(plain.status).toBe(200);
    expect(await contact(plain.body.data.contact)).toMatchObject({ subscribed: true, data: {} });
    // Created now, the contact is no longer the public key's to change.
    await track(p.publicKey, { email: 'quiet@example.com', event: 'signed-up', subscribed: true, data: { a: 2 } }).expect(200);
    expect(await contact(quiet.body.data.contact)).toMatchObject({ subscribed: false, data: { a: 1 } });
  });

  it('the secret key still re-subscribes, overwrites and deletes', async () => {
    const id = await existing('grace@example.com', false, { firstName: 'Grace', plan: 'pro' });
    const res = await track(p.secretKey, {
      email: 'grace@example.com',
      event: 'support-fixed',
      subscribed: true,
      data: { firstName: 'G.', plan: null, city: 'Oslo' },
    });
    expect(res.status).toBe(200);
    expect(await contact(id)).toMatchObject({ subscribed: true, data: { firstName: 'G.', city: 'Oslo' } });
  });

  it('holds in the set-based batch path under concurrency: many public calls on unsubscribed contacts change nothing they may not', async () => {
    const emails = Array.from({ length: 6 }, (_, i) => `burst${i}@example.com`);
    const ids = await Promise.all(emails.map((email) => existing(email, false, { firstName: 'Kept', tier: 'gold' })));
    const calls = emails.flatMap((email) =>
      Array.from({ length: 8 }, (_, j) => ({
        email,
        event: 'burst',
        subscribed: true,
        data: { firstName: `Mallory ${j}`, tier: null, [`k${j}`]: j },
      })),
    );
    const results = await Promise.all(calls.map((body) => track(p.publicKey, body)));
    expect(results.map((r) => r.status)).toEqual(calls.map(() => 200));
    for (const id of ids) {
      expect(await contact(id)).toMatchObject({
        subscribed: false,
        data: { firstName: 'Kept', tier: 'gold', k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7 },
      });
    }
    // Every call recorded its event. (Whether calls shared one set-based statement depends on how they
    // overlap in time: on a quiet machine 48 calls can each run alone, so that is not asserted here.)
    const events = await request(t.url).get('/events?name=burst&limit=100').set(bearer(p.secretKey)).expect(200);
    expect(events.body.total).toBe(calls.length);
  });

  it('a new email tracked at once by public calls and one secret call ends as the secret call says', async () => {
    const calls = [
      ...Array.from({ length: 10 }, (_, j) => ({ key: p.publicKey, body: { subscribed: true, data: { name: `pk ${j}`, [`p${j}`]: j } } })),
      { key: p.secretKey, body: { subscribed: false, data: { name: 'sk' } } },
      ...Array.from({ length: 10 }, (_, j) => ({ key: p.publicKey, body: { subscribed: true, data: { name: `pk ${j + 10}` } } })),
    ];
    const results = await Promise.all(calls.map((c) => track(c.key, { email: 'race@example.com', event: 'race', ...c.body })));
    expect(results.map((r) => r.status)).toEqual(calls.map(() => 200));
    const id = results[0].body.data.contact as string;
    expect(new Set(results.map((r) => r.body.data.contact))).toEqual(new Set([id]));
    // Whatever order they ran in: a public call before the secret one created the contact (subscribed,
    // its name), and the secret call then unsubscribed it and set the name; after it, none could change either.
    const { subscribed, data } = await contact(id);
    expect({ subscribed, name: data.name }).toEqual({ subscribed: false, name: 'sk' });
  });
});
