import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { isPlainEmailAddress } from '../src/modules/suppressions/email-address.js';
import { csvRecordBatches } from '../src/modules/suppressions/suppression-csv.js';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/);

async function records(text: string, chunkSize = 3): Promise<string[][]> {
  const chunks: Buffer[] = [];
  const raw = Buffer.from(text);
  for (let i = 0; i < raw.length; i += chunkSize) chunks.push(raw.subarray(i, i + chunkSize));
  const out: string[][] = [];
  for await (const batch of csvRecordBatches(chunks, { batchSize: 2, maxRecordChars: 100 })) out.push(...batch);
  return out;
}

describe('csv reader', () => {
  it('reads quoted fields, doubled quotes, CRLF and multi-byte characters split across chunks', async () => {
    expect(await records('email,reason\r\n"a,b@x.io","say ""hi"""\nü@ex.de,\n\nlast@x.io')).toEqual([
      ['email', 'reason'],
      ['a,b@x.io', 'say "hi"'],
      ['ü@ex.de', ''],
      ['last@x.io'],
    ]);
  });

  it('reads unquoted lines on the fast path and switches to quotes mid-stream, in any chunking', async () => {
    const text = 'email\nplain@x.io\n"quoted@x.io"\nafter@x.io\r\nlast@x.io';
    for (const size of [1, 2, 5, 1000]) {
      expect(await records(text, size)).toEqual([['email'], ['plain@x.io'], ['quoted@x.io'], ['after@x.io'], ['last@x.io']]);
    }
  });

  it('checks import addresses in one pass (no regular expression)', () => {
    for (const ok of ['a@b.co', 'a.b+c@x-y.example.org', "o'neil@example.ie", 'UP@EXAMPLE.COM']) expect(isPlainEmailAddress(ok)).toBe(true);
    for (const bad of [
      '.a@b.co',
      'a.@b.co',
      'a..b@b.co',
      'a@b',
      'a@-b.co',
      'a@b-.co',
      'a@b.c1',
      'a b@c.co',
      'a@b.co.',
      '@b.co',
      'a@',
      `${'x'.repeat(65)}@b.co`,
      'a@b..co',
      `a@${'b'.repeat(64)}.co`,
    ]) {
      expect({ bad, ok: isPlainEmailAddress(bad) }).toEqual({ bad, ok: false });
    }
  });

  it('cuts a record without line breaks at maxRecordChars instead of growing without bound', async () => {
    const [[field]] = await records('x'.repeat(10_000), 1000);
    expect(field).toHaveLength(100);
  });
});

describe('mail /suppressions', () => {
  let t: MailTestApp;
  let p: MailProjectCredentials;
  let other: MailProjectCredentials;
  let auth: Record<string, string>;

  beforeAll(async () => {
    t = await startMailApp();
    p = await createProject(t, 'Suppressions');
    other = await createProject(t, 'Other');
    auth = bearer(p.secretKey);
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST adds a MANUAL entry (201), answers the first entry for the same address in any case (200)', async () => {
    const created = await request(t.url).post('/suppressions').set(auth).send({ email: 'Ada@Example.com' }).expect(201);
    expect(created.body).toEqual({ email: 'Ada@Example.com', reason: 'MANUAL', source: 'api', detail: null, createdAt: ISO });
    const again = await request(t.url).post('/suppressions').set(auth).send({ email: 'ada@EXAMPLE.com' }).expect(200);
    expect(again.body).toEqual(created.body);
  });

  it('POST validates the address (422)', async () => {
    const res = await request(t.url).post('/suppressions').set(auth).send({ email: 'not an address' });
    expectValidationError(res, [{ field: 'email', code: 'isEmail' }]);
  });

  it('a public key cannot read or change the list', async () => {
    const res = await request(t.url).get('/suppressions').set(bearer(p.publicKey));
    expectMailError(res, 403, 'SECRET_KEY_REQUIRED', /./);
  });

  it('GET lists newest first with filters and keyset pages; another project sees nothing', async () => {
    for (const email of ['b@example.com', 'c@example.com', 'zed@other.org']) {
      await request(t.url).post('/suppressions').set(auth).send({ email }).expect(201);
    }
    const first = await request(t.url).get('/suppressions?limit=2').set(auth).expect(200);
    expect(first.body).toEqual({
      items: [expect.objectContaining({ email: 'zed@other.org' }), expect.objectContaining({ email: 'c@example.com' })],
      nextCursor: expect.any(String),
      hasMore: true,
      total: 4,
    });
    const second = await request(t.url).get(`/suppressions?limit=2&cursor=${first.body.nextCursor}`).set(auth).expect(200);
    expect(second.body.items.map((i: { email: string }) => i.email)).toEqual(['b@example.com', 'Ada@Example.com']);
    expect(second.body.hasMore).toBe(false);
    const search = await request(t.url).get('/suppressions?search=EXAMPLE.COM&reason=MANUAL').set(auth).expect(200);
    expect(search.body.total).toBe(3);
    const none = await request(t.url).get('/suppressions?reason=COMPLAINT').set(auth).expect(200);
    expect(none.body).toEqual({ items: [], nextCursor: null, hasMore: false, total: 0 });
    const bad = await request(t.url).get('/suppressions?reason=SPAM').set(auth);
    expectValidationError(bad, [{ field: 'reason', code: 'isIn' }]);
    const isolated = await request(t.url).get('/suppressions').set(bearer(other.secretKey)).expect(200);
    expect(isolated.body.total).toBe(0);
  });

  it('DELETE removes case-insensitively (204), then 404; another project cannot delete', async () => {
    await request(t.url).delete('/suppressions/B%40EXAMPLE.COM').set(bearer(other.secretKey)).expect(404);
    await request(t.url).delete('/suppressions/B%40EXAMPLE.COM').set(auth).expect(204);
    const res = await request(t.url).delete('/suppressions/b%40example.com').set(auth);
    expectMailError(res, 404, 'NOT_FOUND', 'suppression not found');
  });

  it('POST /suppressions/import reads a CSV: imported, skipped (listed or repeated), invalid', async () => {
    const csv = [
      'name,Email,reason',
      'Ada,ADA@example.com,', // listed already
      'New,new1@example.com,HARD_BOUNCE',
      'Dup,New1@Example.com,MANUAL', // repeated in the file
      'Cmp,"cmp@example.com",complaint',
      'Bad,not-an-address,',
      'Bad reason,x@example.com,SPAM',
      '',
    ].join('\r\n');
    const res = await request(t.url).post('/suppressions/import').set(auth).set('Content-Type', 'text/csv').send(csv).expect(200);
    expect(res.body).toEqual({ imported: 2, skipped: 2, invalid: 2 });
    const complaints = await request(t.url).get('/suppressions?reason=COMPLAINT').set(auth).expect(200);
    expect(complaints.body.items).toEqual([{ email: 'cmp@example.com', reason: 'COMPLAINT', source: 'api', detail: null, createdAt: ISO }]);
  });

  it('import of several staging batches: every row counted once, the first entry of a repeated address kept', async () => {
    const lines = ['email,reason', 'First@Batch.example,COMPLAINT'];
    for (let i = 0; i < 24_998; i++) lines.push(`many${i}@batch.example,${i % 2 ? 'HARD_BOUNCE' : ''}`);
    lines.push('first@batch.example,MANUAL', 'many7@BATCH.example,MANUAL', 'no-at-sign.example,');
    const res = await request(t.url)
      .post('/suppressions/import')
      .set(auth)
      .set('Content-Type', 'text/csv')
      .send(`${lines.join('\n')}\n`)
      .expect(200);
    expect(res.body).toEqual({ imported: 24_999, skipped: 2, invalid: 1 });
    const db = t.app.get(DataSource);
    const rows: { email: string; reason: string }[] = await db.query(
      `SELECT email, reason FROM suppressions WHERE project_id = $1 AND lower(email) IN ('first@batch.example', 'many7@batch.example', 'many8@batch.example')
        ORDER BY lower(email)`,
      [p.id],
    );
    expect(rows).toEqual([
      { email: 'First@Batch.example', reason: 'COMPLAINT' },
      { email: 'many7@batch.example', reason: 'HARD_BOUNCE' },
      { email: 'many8@batch.example', reason: 'MANUAL' },
    ]);
    // Ids are UUIDv7 (version 7, RFC variant), unique, and follow the address order of the import.
    const ids: { id: string }[] = await db.query(
      `SELECT id FROM suppressions WHERE project_id = $1 AND lower(email) LIKE '%@batch.example' ORDER BY lower(email)`,
      [p.id],
    );
    expect(ids).toHaveLength(24_999);
    for (const { id } of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ids.every(({ id }, i) => i === 0 || id > ids[i - 1].id)).toBe(true);
  });

  it('import refuses a body that is not text/csv (415) and a CSV without an email column (422), importing nothing', async () => {
    const json = await request(t.url).post('/suppressions/import').set(auth).send({ email: 'x@example.com' });
    expectMailError(json, 415, 'UNSUPPORTED_MEDIA_TYPE', /text\/csv/);
    const noColumn = await request(t.url)
      .post('/suppressions/import')
      .set(auth)
      .set('Content-Type', 'text/csv; charset=utf-8')
      .send('address\nq@example.com\n');
    expect(noColumn.status).toBe(422);
    const db = t.app.get(DataSource);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM suppressions WHERE lower(email) = 'q@example.com'`);
    expect(n).toBe(0);
  });

  it('lookups by the delivery claim use the case-insensitive unique index', async () => {
    const db = t.app.get(DataSource);
    const plan: { 'QUERY PLAN': string }[] = await db.query(
      `EXPLAIN SELECT 1 FROM suppressions WHERE project_id = $1 AND lower(email) = lower($2)`,
      [p.id, 'ada@example.com'],
    );
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/suppressions_project_email_uq/);
  });
});
