import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { insertVerifiedDomain } from './support/delivery-fixtures.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

/**
 * GET /contacts answers an exact `total` from a per-project count that Postgres maintains
 * (contact_counts, migration 1763930000000-ContactCounts) instead of counting the project's contacts
 * on every page. Every way a contact is created or removed must keep it equal to the real count.
 */
describe('contacts: the maintained total', () => {
  let t: MailTestApp;
  let db: DataSource;
  let p: MailProjectCredentials;
  let auth: Record<string, string>;

  beforeAll(async () => {
    t = await startMailApp();
    db = t.app.get(DataSource);
    p = await createProject(t, 'Totals');
    auth = bearer(p.secretKey);
    await insertVerifiedDomain(db, p.id, 'totals.example.com');
  });
  afterAll(async () => {
    await t.close();
  });

  const listTotal = async (key = p.secretKey, query = '') =>
    (await request(t.url).get(`/contacts?limit=5${query}`).set(bearer(key)).expect(200)).body.total as number;
  const realCount = async (projectId = p.id) =>
    Number((await db.query('SELECT count(*) AS n FROM contacts WHERE project_id = $1', [projectId]))[0].n);
  /** The total the API answers, checked against a count of the rows. */
  const expectTotal = async (expected: number) => {
    expect(await realCount()).toBe(expected);
    expect(await listTotal()).toBe(expected);
  };

  it('counts contacts created by the contacts API, and an upsert of an existing email only once', async () => {
    await expectTotal(0);
    await request(t.url).post('/contacts').set(auth).send({ email: 'one@example.com' }).expect(201);
    await request(t.url).post('/contacts').set(auth).send({ email: 'two@example.com' }).expect(201);
    await request(t.url)
      .post('/contacts')
      .set(auth)
      .send({ email: 'ONE@example.com', data: { plan: 'pro' } })
      .expect(200);
    await expectTotal(2);
  });

  it('stays exact under concurrent creates of new and existing emails (each connection adds to its own shard)', async () => {
    const before = await realCount();
    const emails = Array.from({ length: 40 }, (_, i) => `parallel-${i % 30}@example.com`); // 30 new, 10 repeats
    const results = await Promise.all(emails.map((email) => request(t.url).post('/contacts').set(auth).send({ email })));
    expect(results.every((r) => r.status === 201 || r.status === 200)).toBe(true);
    await expectTotal(before + 30);
    // Several connections did write: the count is spread over shards whose sum is the total.
    const [{ shards }] = await db.query('SELECT count(*)::int AS shards FROM contact_counts WHERE project_id = $1', [p.id]);
    expect(shards).toBeGreaterThan(1);
  });

  it('counts contacts created by /v1/track (its one-statement upsert, batched under load) and by /v1/send', async () => {
    const before = await realCount();
    const tracked = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        request(t.url)
          .post('/v1/track')
          .set(bearer(p.publicKey))
          .send({ email: `tracked-${i % 20}@example.com`, event: 'signed-up' }),
      ),
    );
    expect(tracked.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    await expectTotal(before + 20);
    await request(t.url)
      .post('/v1/send')
      .set(auth)
      .send({
        to: ['new-1@example.com', 'new-2@example.com', 'one@example.com'],
        from: 'me@totals.example.com',
        subject: 'Hi',
        body: '<p>Hi</p>',
      })
      .expect(200);
    await expectTotal(before + 22);
  });

  it('counts deletes, and a delete of a missing contact changes nothing', async () => {
    const before = await realCount();
    const page = (await request(t.url).get('/contacts?limit=3').set(auth).expect(200)).body;
    for (const c of page.contacts) await request(t.url).delete(`/contacts/${c.id}`).set(auth).expect(204);
    await request(t.url).delete(`/contacts/${page.contacts[0].id}`).set(auth).expect(404);
    await expectTotal(before - 3);
  });

  it('is per project: another project’s contacts and total are its own', async () => {
    const other = await createProject(t, 'Other totals');
    const before = await realCount();
    await request(t.url).post('/contacts').set(bearer(other.secretKey)).send({ email: 'one@example.com' }).expect(201);
    await request(t.url).post('/contacts').set(bearer(other.secretKey)).send({ email: 'x@example.com' }).expect(201);
    expect(await listTotal(other.secretKey)).toBe(2);
    await expectTotal(before);
  });

  it('a filtered list counts the rows its filters match (exact too)', async () => {
    await request(t.url).post('/contacts').set(auth).send({ email: 'quiet@example.com', subscribed: false }).expect(201);
    const counts = await db.query('SELECT subscribed, count(*)::int AS n FROM contacts WHERE project_id = $1 GROUP BY subscribed', [p.id]);
    const count = (subscribed: boolean) =>
      (counts as { subscribed: boolean; n: number }[]).find((c) => c.subscribed === subscribed)?.n ?? 0;
    expect(await listTotal(p.secretKey, '&subscribed=false')).toBe(count(false));
    expect(await listTotal(p.secretKey, '&subscribed=true')).toBe(count(true));
    expect(count(true) + count(false)).toBe(await realCount());
    expect(await listTotal(p.secretKey, '&search=PARALLEL-2')).toBe(11); // parallel-2, parallel-20 .. parallel-29
  });

  it('an empty page still answers the total; the last page of a project answers hasMore false', async () => {
    const empty = await createProject(t, 'Empty');
    expect((await request(t.url).get('/contacts').set(bearer(empty.secretKey)).expect(200)).body).toEqual({
      contacts: [],
      cursor: null,
      hasMore: false,
      total: 0,
    });
    const total = await realCount();
    let cursor: string | null = null;
    let seen = 0;
    do {
      const res: request.Response = await request(t.url)
        .get(`/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`)
        .set(auth)
        .expect(200);
      expect(res.body.total).toBe(total);
      seen += res.body.contacts.length;
      cursor = res.body.cursor;
    } while (cursor);
    expect(seen).toBe(total);
  });

  it('a project’s deletion takes its contacts and their count with it', async () => {
    const doomed = await createProject(t, 'Doomed');
    await request(t.url).post('/contacts').set(bearer(doomed.secretKey)).send({ email: 'bye@example.com' }).expect(201);
    await db.query('DELETE FROM projects WHERE id = $1', [doomed.id]);
    expect((await db.query('SELECT count(*)::int AS n FROM contact_counts WHERE project_id = $1', [doomed.id]))[0].n).toBe(0);
    await expectTotal(await realCount());
  });
});
