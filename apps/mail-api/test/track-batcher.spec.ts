import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { parseContactData } from '../src/modules/contacts/contact-data.js';
import { groupBatch, TrackBatcher, type TrackCommand } from '../src/modules/track/track-batcher.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

function command(
  projectId: string,
  email: string,
  eventName: string,
  data?: Record<string, unknown>,
  subscribed?: boolean,
  keyKind: TrackCommand['keyKind'] = 'secret',
): TrackCommand {
  return { projectId, keyKind, email, subscribed, patch: parseContactData(data), eventName };
}

describe('groupBatch: calls for one email merge as if applied in order', () => {
  it('later values win, null deletes, a later set revives a deleted key, the flag is the last one given', () => {
    const [groups, events] = groupBatch([
      command('p', 'A@x.com', 'e1', { a: 1, b: 2 }, false),
      command('p', 'b@x.com', 'e2', { z: 1 }),
      command('p', 'a@X.com', 'e3', { a: null, c: { value: 3, persistent: false } }),
      command('q', 'a@x.com', 'e4', { other: true }), // same email, another project: its own contact
      command('p', 'a@x.com', 'e5', { a: 5, d: null }, true),
      command('p', 'a@x.com', 'e6'),
    ]);
    const change = { subscribedIfNew: null, add: {} };
    expect(groups).toEqual([
      { ...change, projectId: 'p', email: 'A@x.com', subscribed: true, subscribedIfNew: false, set: { a: 5, b: 2 }, unset: ['d'] },
      { ...change, projectId: 'p', email: 'b@x.com', subscribed: null, set: { z: 1 }, unset: [] },
      { ...change, projectId: 'q', email: 'a@x.com', subscribed: null, set: { other: true }, unset: [] },
    ]);
    expect(events).toEqual([
      { group: 0, name: 'e1', data: { a: 1, b: 2 } },
      { group: 1, name: 'e2', data: { z: 1 } },
      { group: 0, name: 'e3', data: { a: null, c: 3 } },
      { group: 2, name: 'e4', data: { other: true } },
      { group: 0, name: 'e5', data: { a: 5, d: null } },
      { group: 0, name: 'e6', data: {} },
    ]);
  });
});

describe('groupBatch: public-key calls only add keys, and give the flag only to a contact they create', () => {
  it('a public call adds missing keys, keeps what earlier calls set, cannot delete; its flag counts only as the first call', () => {
    const pk = (email: string, data?: Record<string, unknown>, subscribed?: boolean) =>
      command('p', email, 'e', data, subscribed, 'public');
    const [groups] = groupBatch([
      pk('a@x.com', { a: 1, n: null }, false), // first call: it would create the contact unsubscribed
      command('p', 'a@x.com', 'e', { b: 2, gone: null }),
      pk('a@x.com', { a: 9, b: 9, gone: 3, c: 4 }, true), // a and b stay, gone was deleted so it is set, c added
      pk('b@x.com', { x: 1 }),
      pk('b@x.com', { x: 2 }, false), // not the first call: its flag is ignored, and x keeps the first value
      command('p', 'c@x.com', 'e', undefined, false),
      pk('c@x.com', { k: null }, true),
    ]);
    expect(groups).toEqual([
      {
        projectId: 'p',
        email: 'a@x.com',
        subscribed: null,
        subscribedIfNew: false,
        set: { b: 2, gone: 3 },
        add: { a: 1, c: 4 },
        unset: [],
      },
      { projectId: 'p', email: 'b@x.com', subscribed: null, subscribedIfNew: null, set: {}, add: { x: 1 }, unset: [] },
      { projectId: 'p', email: 'c@x.com', subscribed: false, subscribedIfNew: false, set: {}, add: {}, unset: [] },
    ]);
  });
});

describe('TrackBatcher on Postgres', () => {
  let t: MailTestApp;
  let p: MailProjectCredentials;
  let batcher: TrackBatcher;
  let ds: DataSource;
  const contactOf = async (email: string) =>
    (
      await ds.query(`SELECT id, email, subscribed, data FROM contacts WHERE project_id = $1 AND lower(email) = lower($2)`, [p.id, email])
    )[0];

  beforeAll(async () => {
    t = await startMailApp();
    p = await createProject(t, 'Batches');
    batcher = t.app.get(TrackBatcher);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  it('calls made together are written in one transaction, each with its own event', async () => {
    await request(t.url)
      .post('/contacts')
      .set(bearer(p.secretKey))
      .send({ email: 'known@example.com', subscribed: false, data: { plan: 'pro', old: 1 } })
      .expect(201);
    const calls = [
      command(p.id, 'new1@example.com', 'signed-up', { plan: 'trial' }),
      command(p.id, 'Known@example.com', 'viewed', { old: null, seen: { value: 1, persistent: false } }),
      command(p.id, 'new2@example.com', 'signed-up', undefined, false),
      command(p.id, 'NEW1@example.com', 'upgraded', { plan: 'pro', seats: 3 }),
      command(p.id, 'known@example.com', 'viewed', { plan: 'pro' }),
    ];
    const rows = await Promise.all(calls.map((c) => batcher.track(c)));
    expect(new Set(rows.map((r) => r.id)).size).toBe(5);
    // One transaction: one now() for every event of the batch.
    expect(new Set(rows.map((r) => r.created_at.toISOString())).size).toBe(1);

    const new1 = await contactOf('new1@example.com');
    const known = await contactOf('known@example.com');
    const new2 = await contactOf('new2@example.com');
    expect(new1).toEqual({ id: rows[0].contact_id, email: 'new1@example.com', subscribed: true, data: { plan: 'pro', seats: 3 } });
    expect(rows[3].contact_id).toBe(new1.id);
    expect(known).toEqual({ id: rows[1].contact_id, email: 'known@example.com', subscribed: false, data: { plan: 'pro' } });
    expect(rows[4].contact_id).toBe(known.id);
    expect(new2).toMatchObject({ id: rows[2].contact_id, subscribed: false, data: {} });

    const events = await ds.query(`SELECT id, contact_id, name, data FROM events WHERE id = ANY($1) `, [rows.map((r) => r.id)]);
    const byId = new Map(events.map((e: { id: string }) => [e.id, e]));
    expect(rows.map((r) => byId.get(r.id))).toEqual([
      { id: rows[0].id, contact_id: new1.id, name: 'signed-up', data: { plan: 'trial' } },
      { id: rows[1].id, contact_id: known.id, name: 'viewed', data: { old: null, seen: 1 } },
      { id: rows[2].id, contact_id: new2.id, name: 'signed-up', data: {} },
      { id: rows[3].id, contact_id: new1.id, name: 'upgraded', data: { plan: 'pro', seats: 3 } },
      { id: rows[4].id, contact_id: known.id, name: 'viewed', data: { plan: 'pro' } },
    ]);
  });

  it('public-key calls in one batch neither re-subscribe nor overwrite nor delete; a secret call in it still does', async () => {
    await request(t.url)
      .post('/contacts')
      .set(bearer(p.secretKey))
      .send({ email: 'guarded@example.com', subscribed: false, data: { name: 'Ada', plan: 'pro', city: 'Rome' } })
      .expect(201);
    const pk = (email: string, data?: Record<string, unknown>, subscribed?: boolean) =>
      command(p.id, email, 'seen', data, subscribed, 'public');
    const rows = await Promise.all(
      [
        pk('guarded@example.com', { name: 'Mallory', plan: null, added: 1 }, true),
        pk('pk-new@example.com', { a: 1 }, false),
        command(p.id, 'GUARDED@example.com', 'seen', { city: null }),
        pk('guarded@example.com', { city: 'Paris' }, true), // deleted by the secret call just before: set
        pk('pk-new@example.com', { a: 2 }, true),
      ].map((c) => batcher.track(c)),
    );
    expect(new Set(rows.map((r) => r.created_at.toISOString())).size).toBe(1); // one batch
    expect(await contactOf('guarded@example.com')).toMatchObject({
      subscribed: false,
      data: { name: 'Ada', plan: 'pro', added: 1, city: 'Paris' },
    });
    expect(await contactOf('pk-new@example.com')).toMatchObject({ subscribed: false, data: { a: 1 } });
  });

  it('a call that fails does not fail the others of its batch, and leaves nothing behind', async () => {
    await ds.query(`ALTER TABLE events ADD CONSTRAINT test_no_poison CHECK (name <> 'poison')`);
    try {
      const calls = [
        command(p.id, 'ok1@example.com', 'fine'),
        command(p.id, 'victim@example.com', 'poison', { a: 1 }),
        command(p.id, 'ok2@example.com', 'fine'),
      ];
      const results = await Promise.allSettled(calls.map((c) => batcher.track(c)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await contactOf('ok1@example.com')).toBeDefined();
      expect(await contactOf('ok2@example.com')).toBeDefined();
      // The failed call's contact upsert rolled back with its event.
      expect(await contactOf('victim@example.com')).toBeUndefined();
    } finally {
      await ds.query(`ALTER TABLE events DROP CONSTRAINT test_no_poison`);
    }
  });

  it('concurrent HTTP tracks across many contacts each land exactly once', async () => {
    const emails = Array.from({ length: 10 }, (_, i) => `fan${i}@example.com`);
    const calls = emails.flatMap((email) => Array.from({ length: 5 }, (_, j) => ({ email, event: `step-${j}`, data: { [`s${j}`]: j } })));
    const res = await Promise.all(calls.map((body) => request(t.url).post('/v1/track').set(bearer(p.publicKey)).send(body)));
    expect(res.map((r) => r.status)).toEqual(calls.map(() => 200));
    for (const email of emails) {
      const c = await contactOf(email);
      expect(c.data).toEqual({ s0: 0, s1: 1, s2: 2, s3: 3, s4: 4 });
      const [{ count }] = await ds.query(`SELECT count(*)::int AS count FROM events WHERE contact_id = $1`, [c.id]);
      expect(count).toBe(5);
    }
  });
});
