import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailContact, MailProjectCredentials } from '@app/contracts';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('mail contacts', () => {
  let t: MailTestApp;
  let p: MailProjectCredentials;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startMailApp();
    p = await createProject(t, 'Contacts');
    auth = bearer(p.secretKey);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('upsert, read, update, delete', () => {
    let created: MailContact;

    it('POST /contacts creates a contact: 201, subscribed by default, _meta.isNew', async () => {
      const res = await request(t.url)
        .post('/contacts')
        .set(auth)
        .send({ email: ' Ada@Example.com ', data: { plan: 'free', seats: 3 } })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        email: 'Ada@Example.com',
        subscribed: true,
        data: { plan: 'free', seats: 3 },
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        _meta: { isNew: true, isUpdate: false },
      });
      const { _meta, ...contact } = res.body;
      created = contact;
    });

    it('POST /contacts with the same email in any case updates it: 200, _meta.isUpdate, data merged', async () => {
      const res = await request(t.url)
        .post('/contacts')
        .set(auth)
        .send({
          email: 'ada@EXAMPLE.com',
          data: {
            plan: 'pro',
            seats: null,
            company: { value: 'Analytical', persistent: true },
            lastPage: { value: '/pricing', persistent: false },
          },
        })
        .expect(200);
      expect(res.body).toEqual({
        ...created,
        data: { plan: 'pro', company: 'Analytical' },
        updatedAt: expect.stringMatching(ISO),
        _meta: { isNew: false, isUpdate: true },
      });
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
      // The flag changes only when given.
      const unsubscribed = await request(t.url)
        .post('/contacts')
        .set(auth)
        .send({ email: 'ada@example.com', subscribed: false })
        .expect(200);
      expect(unsubscribed.body).toMatchObject({ id: created.id, subscribed: false, data: { plan: 'pro', company: 'Analytical' } });
      const again = await request(t.url).post('/contacts').set(auth).send({ email: 'ada@example.com' }).expect(200);
      expect(again.body.subscribed).toBe(false);
      // A new contact may start unsubscribed.
      const optedOut = await request(t.url).post('/contacts').set(auth).send({ email: 'grace@example.com', subscribed: false }).expect(201);
      expect(optedOut.body).toMatchObject({ subscribed: false, data: {}, _meta: { isNew: true, isUpdate: false } });
    });

    it('GET /contacts/{id} returns the contact itself', async () => {
      const res = await request(t.url).get(`/contacts/${created.id}`).set(auth).expect(200);
      expect(res.body).toEqual({
        ...created,
        subscribed: false,
        data: { plan: 'pro', company: 'Analytical' },
        updatedAt: expect.stringMatching(ISO),
      });
    });

    it('PATCH /contacts/{id} changes subscribed and merges data; an empty body changes nothing', async () => {
      const res = await request(t.url)
        .patch(`/contacts/${created.id}`)
        .set(auth)
        .send({ subscribed: true, data: { plan: null, score: 9.5, vip: true, note: { value: null } } })
        .expect(200);
      expect(res.body).toEqual({
        ...created,
        subscribed: true,
        data: { company: 'Analytical', score: 9.5, vip: true },
        updatedAt: expect.stringMatching(ISO),
      });
      const same = await request(t.url).patch(`/contacts/${created.id}`).set(auth).send({}).expect(200);
      expect(same.body).toEqual(res.body);
      // Fields that are not patchable are ignored, not applied.
      const ignored = await request(t.url)
        .patch(`/contacts/${created.id}`)
        .set(auth)
        .send({ email: 'other@example.com', id: 'x' })
        .expect(200);
      expect(ignored.body).toEqual(res.body);
    });

    it('DELETE /contacts/{id} answers 204 and the contact is gone, with its events', async () => {
      const tracked = await request(t.url).post('/v1/track').set(auth).send({ email: 'ada@example.com', event: 'signed-in' }).expect(200);
      expect(tracked.body.data.contact).toBe(created.id);
      const res = await request(t.url).delete(`/contacts/${created.id}`).set(auth).expect(204);
      expect(res.text).toBe('');
      expectMailError(await request(t.url).get(`/contacts/${created.id}`).set(auth), 404, 'NOT_FOUND', 'contact not found');
      expectMailError(await request(t.url).delete(`/contacts/${created.id}`).set(auth), 404, 'NOT_FOUND', 'contact not found');
      const events = await request(t.url).get(`/events?contactId=${created.id}`).set(auth).expect(200);
      expect(events.body).toEqual({ items: [], nextCursor: null, hasMore: false, total: 0 });
      // The email is free again: a new contact with a new id.
      const recreated = await request(t.url).post('/contacts').set(auth).send({ email: 'ada@example.com' }).expect(201);
      expect(recreated.body.id).not.toBe(created.id);
    });

    it('a malformed id is a 404 like a missing one', async () => {
      for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
        expectMailError(await request(t.url).get(`/contacts/${id}`).set(auth), 404, 'NOT_FOUND', 'contact not found');
        expectMailError(
          await request(t.url).patch(`/contacts/${id}`).set(auth).send({ subscribed: true }),
          404,
          'NOT_FOUND',
          'contact not found',
        );
        expectMailError(await request(t.url).delete(`/contacts/${id}`).set(auth), 404, 'NOT_FOUND', 'contact not found');
      }
    });

    it('timestamps read as UTC ISO text with milliseconds truncated, as Date.toISOString writes them', async () => {
      // Postgres formats them (isoTimestamp): the stored microseconds and the offset they were
      // written with must come back exactly as a JavaScript Date of the same instant would print.
      const res = await request(t.url).post('/contacts').set(auth).send({ email: 'clock@example.com' }).expect(201);
      const db = t.app.get(DataSource);
      const cases: [stored: string, iso: string][] = [
        ['2024-02-29 23:59:59.999999+00', '2024-02-29T23:59:59.999Z'],
        ['2024-03-10 01:30:00.5-05', '2024-03-10T06:30:00.500Z'],
        ['1999-12-31 23:00:00+01:30', '1999-12-31T21:30:00.000Z'],
        ['2026-11-25 10:00:00.000999+00', '2026-11-25T10:00:00.000Z'],
      ];
      for (const [stored, iso] of cases) {
        await db.query('UPDATE contacts SET created_at = $2, updated_at = $2 WHERE id = $1', [res.body.id, stored]);
        const read = await request(t.url).get(`/contacts/${res.body.id}`).set(auth).expect(200);
        expect({ stored, createdAt: read.body.createdAt, updatedAt: read.body.updatedAt }).toEqual({
          stored,
          createdAt: iso,
          updatedAt: iso,
        });
        const listed = await request(t.url).get('/contacts?search=clock@').set(auth).expect(200);
        expect(listed.body.contacts[0].createdAt).toBe(iso);
      }
    });
  });

  describe('request validation', () => {
    it('POST /contacts: 422 for a bad email, flag or data; 400 for malformed JSON', async () => {
      expectValidationError(await request(t.url).post('/contacts').set(auth).send({}), [
        { field: 'email', code: 'maxLength' },
        { field: 'email', code: 'isEmail', message: 'email must be an email' },
      ]);
      expectValidationError(await request(t.url).post('/contacts').set(auth).send({ email: 'nope', subscribed: 'yes' }), [
        { field: 'email', code: 'isEmail', message: 'email must be an email' },
        { field: 'subscribed', code: 'isBoolean', message: 'subscribed must be a boolean value' },
      ]);
      const cases: [unknown, string][] = [
        [[1, 2], 'data must be an object'],
        ['text', 'data must be an object'],
        [{ nested: { a: 1 } }, 'data.nested must be a string, number, boolean, null or {value, persistent}'],
        [{ list: [1] }, 'data.list must be a string, number, boolean, null or {value, persistent}'],
        [{ w: { value: 1, persistent: 'no' } }, 'data.w.persistent must be a boolean'],
        [{ w: { value: { deep: true } } }, 'data.w.value must be a string, number, boolean, null or {value, persistent}'],
        [{ '': 1 }, 'data keys must be 1 to 128 characters long'],
        [Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])), 'data must have at most 100 keys'],
        [{ long: 'x'.repeat(10_001) }, 'data.long must be at most 10000 characters'],
        [{ half: { value: 'a\ud800b' } }, 'data.half.value must not contain NUL characters or unpaired surrogates'],
      ];
      for (const [data, message] of cases) {
        const res = await request(t.url).post('/contacts').set(auth).send({ email: 'valid@example.com', data });
        expectValidationError(res, [{ field: 'data', code: 'isContactData', message }]);
      }
      // NUL characters are refused for every body before validation, with the exact field.
      for (const [data, field] of [
        [{ nul: 'a\u0000b' }, 'data.nul'],
        [{ 'a\u0000': 1 }, 'data.a\\u0000'],
      ] as const) {
        const res = await request(t.url).post('/contacts').set(auth).send({ email: 'valid@example.com', data });
        expectValidationError(res, [{ field, code: 'hasNoNulCharacter', message: `${field} must not contain NUL characters` }]);
      }
      const malformed = await request(t.url).post('/contacts').set(auth).set('Content-Type', 'application/json').send('{"email": "a@');
      expectMailError(malformed, 400, 'INVALID_JSON', 'malformed JSON body');
      expect((await request(t.url).get('/contacts?search=valid@').set(auth)).body.total).toBe(0);
    });

    it('PATCH /contacts/{id}: 422 for a bad flag or data', async () => {
      const { body } = await request(t.url).post('/contacts').set(auth).send({ email: 'patchme@example.com' }).expect(201);
      expectValidationError(await request(t.url).patch(`/contacts/${body.id}`).set(auth).send({ subscribed: 1, data: [] }), [
        { field: 'subscribed', code: 'isBoolean' },
        { field: 'data', code: 'isContactData', message: 'data must be an object' },
      ]);
    });

    it('GET /contacts: limit 1..100 (default 20), a real cursor, a boolean subscribed; else 422', async () => {
      const cases: [string, { field: string; code: string; message?: string }][] = [
        ['limit=0', { field: 'limit', code: 'min', message: 'limit must not be less than 1' }],
        ['limit=101', { field: 'limit', code: 'max', message: 'limit must not be greater than 100' }],
        ['limit=1.5', { field: 'limit', code: 'isInt', message: 'limit must be an integer number' }],
        ['cursor=bogus', { field: 'cursor', code: 'isCursor', message: 'cursor is not a cursor this list returned' }],
        ['subscribed=yes', { field: 'subscribed', code: 'isBoolean', message: 'subscribed must be a boolean value' }],
        [`search=${'a'.repeat(255)}`, { field: 'search', code: 'maxLength' }],
        ['search=a%00b', { field: 'search', code: 'hasNoNulCharacter', message: 'search must not contain NUL characters' }],
      ];
      for (const [query, error] of cases) {
        expectValidationError(await request(t.url).get(`/contacts?${query}`).set(auth), [error]);
      }
      const abc = await request(t.url).get('/contacts?limit=abc').set(auth);
      expectMailError(abc, 422, 'VALIDATION_ERROR', /^validation failed: limit/, {
        errors: expect.arrayContaining([
          { field: 'limit', code: 'isInt', message: 'limit must be an integer number' },
        ]) as unknown as unknown[],
      });
    });
  });

  describe('concurrency', () => {
    it('concurrent upserts of one email create exactly one contact and lose no data', async () => {
      const q = await createProject(t, 'Concurrent');
      const n = 24;
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          request(t.url)
            .post('/contacts')
            .set(bearer(q.secretKey))
            .send({ email: i % 2 ? 'Race@Example.com' : 'race@example.COM', data: { [`k${i}`]: i } }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([...Array(n - 1).fill(200), 201]);
      expect(results.filter((r) => r.body._meta.isNew)).toHaveLength(1);
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      const list = await request(t.url).get('/contacts').set(bearer(q.secretKey)).expect(200);
      expect(list.body.total).toBe(1);
      expect(list.body.contacts[0].data).toEqual(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
      const [{ count }] = await t.app.get(DataSource).query(`SELECT count(*)::int AS count FROM contacts WHERE project_id = $1`, [q.id]);
      expect(count).toBe(1);
    });
  });

  describe('listing', () => {
    let q: MailProjectCredentials;
    const emails = Array.from({ length: 250 }, (_, i) => `user${String(i).padStart(3, '0')}${i % 5 === 0 ? '_VIP' : ''}@example.com`);

    beforeAll(async () => {
      q = await createProject(t, 'Listing');
      for (let i = 0; i < emails.length; i += 25) {
        await Promise.all(
          emails.slice(i, i + 25).map((email, j) =>
            request(t.url)
              .post('/contacts')
              .set(bearer(q.secretKey))
              .send({ email, subscribed: (i + j) % 3 !== 0 })
              .expect(201),
          ),
        );
      }
    });

    async function walk(query: string): Promise<{ ids: string[]; pages: number; totals: Set<number> }> {
      const ids: string[] = [];
      const totals = new Set<number>();
      let cursor: string | null = null;
      let pages = 0;
      do {
        const url: string = `/contacts?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await request(t.url).get(url).set(bearer(q.secretKey)).expect(200);
        pages += 1;
        expect(Object.keys(res.body).sort()).toEqual(['contacts', 'cursor', 'hasMore', 'total']);
        expect(res.body.hasMore).toBe(res.body.cursor !== null);
        totals.add(res.body.total);
        ids.push(...res.body.contacts.map((c: MailContact) => c.id));
        cursor = res.body.cursor;
        expect(pages).toBeLessThan(300);
      } while (cursor);
      return { ids, pages, totals };
    }

    it('pages through 250 contacts with no gaps or repeats, newest first, for several page sizes', async () => {
      const [{ ids: all }] = await t.app
        .get(DataSource)
        .query(`SELECT array_agg(id ORDER BY id DESC) AS ids FROM contacts WHERE project_id = $1`, [q.id]);
      expect(all).toHaveLength(250);
      for (const [query, pages] of [
        ['limit=100', 3],
        ['', 13],
        ['limit=7', 36],
        ['limit=1', 250],
      ] as const) {
        const walked = await walk(query);
        expect({ query, pages: walked.pages, totals: [...walked.totals] }).toEqual({ query, pages, totals: [250] });
        expect(walked.ids).toEqual(all);
      }
      const first = await request(t.url).get('/contacts').set(bearer(q.secretKey)).expect(200);
      expect(first.body.contacts).toHaveLength(20);
    });

    it('contacts created while paging neither repeat nor hide the others', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let extra = 0;
      do {
        const url: string = `/contacts?limit=40${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await request(t.url).get(url).set(bearer(q.secretKey)).expect(200);
        seen.push(...res.body.contacts.map((c: MailContact) => c.email));
        cursor = res.body.cursor;
        await request(t.url)
          .post('/contacts')
          .set(bearer(q.secretKey))
          .send({ email: `late${extra++}@example.com` })
          .expect(201);
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.filter((e) => e.startsWith('user')).sort()).toEqual([...emails].sort());
      await t.app.get(DataSource).query(`DELETE FROM contacts WHERE project_id = $1 AND email LIKE 'late%'`, [q.id]);
    });

    it('filters by subscribed, with total counting the matches', async () => {
      const unsubscribed = await walk('subscribed=false&limit=100');
      expect(unsubscribed.ids).toHaveLength(84);
      expect([...unsubscribed.totals]).toEqual([84]);
      const subscribed = await request(t.url).get('/contacts?subscribed=true&limit=5').set(bearer(q.secretKey)).expect(200);
      expect(subscribed.body.total).toBe(166);
      expect(subscribed.body.contacts.every((c: MailContact) => c.subscribed)).toBe(true);
    });

    it('search is a case-insensitive substring of the email; % and _ match themselves', async () => {
      const res = await request(t.url).get('/contacts?search=USER12&limit=100').set(bearer(q.secretKey)).expect(200);
      expect(res.body.contacts.map((c: MailContact) => c.email).sort()).toEqual(emails.filter((e) => e.includes('user12')).sort());
      expect(res.body.total).toBe(10);
      const literal = await request(t.url).get('/contacts?search=_vip&limit=100').set(bearer(q.secretKey)).expect(200);
      expect(literal.body.total).toBe(50);
      // As a LIKE wildcard `_` would match user000..user249; literally, nothing has "user_0".
      const wildcard = await request(t.url).get('/contacts?search=user_0').set(bearer(q.secretKey)).expect(200);
      expect(wildcard.body.total).toBe(0);
      const none = await request(t.url).get('/contacts?search=%25').set(bearer(q.secretKey)).expect(200);
      expect(none.body).toEqual({ contacts: [], cursor: null, hasMore: false, total: 0 });
      const combined = await walk('search=_vip&subscribed=false&limit=3');
      expect(combined.ids.length).toBe([...combined.totals][0]);
      expect(combined.ids.length).toBeGreaterThan(0);
    });

    it('search is served by the trigram index on lower(email)', async () => {
      // The plan of a tiny table is the planner's whim; what matters is that the search expression
      // (lower(email) LIKE '%...%', as ContactsRepository writes it) can be answered from the index.
      const plan = await t.app.get(DataSource).transaction(async (tx) => {
        await tx.query('SET LOCAL enable_seqscan = off');
        return tx.query(`EXPLAIN SELECT id FROM contacts WHERE lower(email) LIKE $1`, ['%user12%']);
      });
      expect(plan.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')).toContain('Bitmap Index Scan on contacts_email_trgm_idx');
    });
  });
});
