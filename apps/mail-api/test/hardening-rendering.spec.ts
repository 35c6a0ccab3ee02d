import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { renderedSize, renderTemplate } from '../src/modules/templates/template-rendering.js';
import { insertVerifiedDomain } from './support/delivery-fixtures.js';
import { bearer, createProject, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const DOMAIN = 'render.example.com';
/** The documented caps of POST /v1/send. */
const MAX_BODY_BYTES = 512 * 1024;
const MAX_DATA_BYTES = 64 * 1024;
const MAX_SUBJECT = 998;

/**
 * Issue #11 item 12: `{{x}}` repeated with a large `x` must not render hundreds of MB per recipient.
 * `data`, and the rendered subject and body of every recipient, are capped at request time (422),
 * so nothing oversized reaches Postgres or the worker.
 */
describe('POST /v1/send: rendering amplification', () => {
  let t: MailTestApp;
  let db: DataSource;
  let p: MailProjectCredentials;

  beforeAll(async () => {
    t = await startMailApp();
    db = t.app.get(DataSource);
    p = await createProject(t, 'Amplification');
    await insertVerifiedDomain(db, p.id, DOMAIN);
  });
  afterAll(async () => {
    await t?.close();
  });

  const base = { to: 'x@example.net', from: `a@${DOMAIN}`, subject: 'hello' };
  const send = (body: object) => request(t.url).post('/v1/send').set(bearer(p.secretKey)).send(body);
  const counts = async () =>
    (await db.query('SELECT (SELECT count(*) FROM emails)::int AS emails, (SELECT count(*) FROM contacts)::int AS contacts'))[0];

  it('`data` over 64 KB serialized is a 422; exactly 64 KB is accepted', async () => {
    // {"x":"…"} is the value plus 8 bytes.
    const over = await send({ ...base, body: '<p>hi</p>', data: { x: 'y'.repeat(MAX_DATA_BYTES - 7) } });
    expectValidationError(over, [{ field: 'data', code: 'maxSerializedSize', message: /65536 bytes/ }]);
    await send({ ...base, body: '<p>hi</p>', data: { x: 'y'.repeat(MAX_DATA_BYTES - 8) } }).expect(200);
  });

  it('a body rendering to hundreds of MB per recipient is a 422 at request time, and nothing is written', async () => {
    const before = await counts();
    // 500 KB of placeholders times a 60 KB value: 6 GB per recipient if it were rendered.
    const res = await send({
      ...base,
      to: ['r1@example.net', 'r2@example.net'],
      body: '{{x}}'.repeat(100_000),
      data: { x: 'y'.repeat(60_000) },
    });
    expectValidationError(res, [{ field: 'body', code: 'maxRenderedSize', message: /r1@example\.net/ }]);
    expect(await counts()).toEqual(before);
  });

  it('the rendered size counts HTML escaping, to the byte: at the cap it is accepted, one byte more is a 422', async () => {
    // `<` is escaped to `&lt;` (4 bytes) in the body; `é` is 2 bytes of UTF-8.
    const value = '<'.repeat(1000);
    const pad = (bytes: number) => 'é'.repeat(Math.floor(bytes / 2)) + 'z'.repeat(bytes % 2);
    const body = (fallback: number) => `{{v}}${pad(MAX_BODY_BYTES - 4000 - 5)}{{ missing ?? ${'f'.repeat(fallback)} }}`;
    await send({ ...base, body: body(5), data: { v: value } }).expect(200);
    const over = await send({ ...base, body: body(6), data: { v: value } });
    expectValidationError(over, [{ field: 'body', code: 'maxRenderedSize' }]);
    // 200 KB as written, 1 MB escaped (`&` is `&amp;`): only the escaped size is over the cap.
    const escaped = await send({ ...base, body: '{{v}}'.repeat(200), data: { v: '&'.repeat(1000) } });
    expectValidationError(escaped, [{ field: 'body', code: 'maxRenderedSize' }]);
  });

  it('is computed per recipient: {{email}} of a long address can pass the cap where a short one does not', async () => {
    const body = `${'z'.repeat(MAX_BODY_BYTES - 20)}{{email}}`;
    await send({ ...base, to: 'short@ex.co', body }).expect(200);
    const res = await send({ ...base, to: ['short2@ex.co', 'a-rather-long-recipient@example.net'], body });
    expectValidationError(res, [{ field: 'body', code: 'maxRenderedSize', message: /a-rather-long-recipient@example\.net/ }]);
    expect(res.body.error.errors[0].message).not.toMatch(/short2@ex\.co/);
  });

  it('a rendered subject over 998 characters is a 422; exactly 998 is accepted', async () => {
    await send({ ...base, subject: 'S: {{x}}', body: 'b', data: { x: 'y'.repeat(MAX_SUBJECT - 3) } }).expect(200);
    const res = await send({ ...base, subject: 'S: {{x}}', body: 'b', data: { x: 'y'.repeat(MAX_SUBJECT - 2) } });
    expectValidationError(res, [{ field: 'subject', code: 'maxRenderedLength', message: /998/ }]);
  });

  it('applies to a template’s subject and body as well', async () => {
    const template = await request(t.url)
      .post('/templates')
      .set(bearer(p.secretKey))
      .send({ name: 'Amplifier', subject: '{{s}}{{s}}', body: '<p>{{x}}</p>'.repeat(20) })
      .expect(201);
    const res = await send({
      template: template.body.id,
      to: 'x@example.net',
      from: `a@${DOMAIN}`,
      data: { s: 's'.repeat(600), x: 'y'.repeat(30_000) },
    });
    expectValidationError(res, [
      { field: 'subject', code: 'maxRenderedLength' },
      { field: 'body', code: 'maxRenderedSize' },
    ]);
  });

  it('documents the caps in the OpenAPI description of POST /v1/send', async () => {
    const doc = (await request(t.url).get('/openapi.json').expect(200)).body;
    const description: string = doc.paths['/v1/send'].post.description;
    expect(description).toMatch(/`data`[^.]*64 KB/);
    expect(description).toMatch(/subject[^.]*998 characters/);
    expect(description).toMatch(/body[^.]*512 KB/);
  });

  describe('renderedSize', () => {
    const variables = {
      name: 'Ada <Lovelace> & "friends"',
      n: 42,
      obj: { a: '<i>', b: [1, 'é'] },
      empty: '',
      nothing: null,
      emoji: '😀',
    };
    const sources = [
      '',
      'plain text, no placeholders',
      'Hi {{name}}, {{ n }} {{obj}} {{obj.b}} [{{empty}}] [{{nothing ?? none}}] {{ missing ?? "dear friend" }} {{emoji}}',
      'unclosed {{ name',
      'bad {{ bad name }} {{}} ok {{name}}',
      'é😀 {{ missing }} <p>{{obj.a}}</p>',
    ];
    it.each(sources)('equals the size of the rendered text for %j', (source) => {
      for (const escapeHtml of [true, false]) {
        const rendered = renderTemplate(source, variables, { escapeHtml });
        expect(renderedSize(source, variables, { escapeHtml, unit: 'utf8', limit: Infinity })).toBe(Buffer.byteLength(rendered, 'utf8'));
        expect(renderedSize(source, variables, { escapeHtml, unit: 'utf16', limit: Infinity })).toBe(rendered.length);
      }
    });

    it('stops once past the limit, answering a size above it', () => {
      const size = renderedSize('{{x}}'.repeat(1_000_000), { x: 'y'.repeat(1_000_000) }, { escapeHtml: true, unit: 'utf8', limit: 100 });
      expect(size).toBeGreaterThan(100);
      expect(size).toBeLessThanOrEqual(1_000_100);
    });
  });
});
