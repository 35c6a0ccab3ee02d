import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { MailProjectCredentials, MailTemplate } from '@app/contracts';
import { TemplatesService } from '../src/modules/templates/templates.service.js';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/);
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);

const WELCOME = {
  name: 'Welcome',
  subject: 'Welcome, {{ firstName ?? friend }}',
  body: '<h1>Hi {{user.firstName}}</h1><p>{{ plan ?? "free" }}</p>',
};

describe('mail /templates', () => {
  let t: MailTestApp;
  let p: MailProjectCredentials;
  let auth: Record<string, string>;
  const create = (body: object) => request(t.url).post('/templates').set(auth).send(body);

  beforeAll(async () => {
    t = await startMailApp();
    p = await createProject(t, 'Templates');
    auth = bearer(p.secretKey);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('CRUD', () => {
    let created: MailTemplate;

    it('POST answers 201 with the bare template; optional fields null, type TRANSACTIONAL', async () => {
      const res = await create(WELCOME).expect(201);
      created = res.body;
      expect(res.body).toEqual({
        id: UUID,
        ...WELCOME,
        description: null,
        from: null,
        fromName: null,
        replyTo: null,
        type: 'TRANSACTIONAL',
        createdAt: ISO,
        updatedAt: ISO,
      });
    });

    it('POST stores every field; the from address needs no verified domain at save time', async () => {
      const full = {
        name: '  Newsletter  ',
        subject: 'News',
        body: '<p>news</p>',
        from: 'news@unverified.example',
        fromName: 'The News Team',
        replyTo: 'reply@example.com',
        type: 'MARKETING',
        description: 'Monthly',
      };
      const res = await create(full).expect(201);
      expect(res.body).toEqual({ ...full, name: 'Newsletter', id: UUID, createdAt: ISO, updatedAt: ISO });
    });

    it('GET /templates/{id} answers the template', async () => {
      const res = await request(t.url).get(`/templates/${created.id}`).set(auth).expect(200);
      expect(res.body).toEqual(created);
    });

    it('PATCH changes the given fields only; null clears optional fields; {} changes nothing', async () => {
      const set = await request(t.url)
        .patch(`/templates/${created.id}`)
        .set(auth)
        .send({ subject: 'New subject', from: 'hello@example.com', fromName: 'Hello', description: 'd', type: 'MARKETING' })
        .expect(200);
      expect(set.body).toEqual({
        ...created,
        subject: 'New subject',
        from: 'hello@example.com',
        fromName: 'Hello',
        description: 'd',
        type: 'MARKETING',
        updatedAt: ISO,
      });
      const cleared = await request(t.url)
        .patch(`/templates/${created.id}`)
        .set(auth)
        .send({ from: null, fromName: null, description: null })
        .expect(200);
      expect(cleared.body).toEqual({ ...set.body, from: null, fromName: null, description: null, updatedAt: ISO });
      const same = await request(t.url).patch(`/templates/${created.id}`).set(auth).send({}).expect(200);
      expect(same.body).toEqual(cleared.body);
      // Unknown fields are ignored, not applied.
      const ignored = await request(t.url).patch(`/templates/${created.id}`).set(auth).send({ id: 'x', projectId: 'y' }).expect(200);
      expect(ignored.body).toEqual(cleared.body);
    });

    it('PATCH: null is a 422 for the required fields and type', async () => {
      const res = await request(t.url)
        .patch(`/templates/${created.id}`)
        .set(auth)
        .send({ name: null, subject: null, body: null, type: null });
      expectValidationError(res, [
        { field: 'name', code: 'isString' },
        { field: 'name', code: 'isLength' },
        { field: 'subject', code: 'isString' },
        { field: 'subject', code: 'isLength' },
        { field: 'body', code: 'isString' },
        { field: 'body', code: 'isByteLength' },
        { field: 'type', code: 'isIn', message: 'type must be one of the following values: TRANSACTIONAL, MARKETING' },
      ]);
    });

    it('the service exposes findById for the send path (404 DomainError when missing)', async () => {
      const service = t.app.get(TemplatesService);
      const project = { id: p.id, name: p.name, keyKind: 'secret' as const };
      expect((await service.findById(project, created.id)).id).toBe(created.id);
      await expect(service.findById(project, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
        code: 'NOT_FOUND',
        status: 404,
      });
    });

    it('DELETE answers 204, then the template is gone', async () => {
      const res = await request(t.url).delete(`/templates/${created.id}`).set(auth).expect(204);
      expect(res.text).toBe('');
      expectMailError(await request(t.url).get(`/templates/${created.id}`).set(auth), 404, 'NOT_FOUND', 'template not found');
      expectMailError(await request(t.url).delete(`/templates/${created.id}`).set(auth), 404, 'NOT_FOUND', 'template not found');
    });

    it('a malformed or unknown id is a 404 on every route', async () => {
      for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
        expectMailError(await request(t.url).get(`/templates/${id}`).set(auth), 404, 'NOT_FOUND', 'template not found');
        expectMailError(
          await request(t.url).patch(`/templates/${id}`).set(auth).send({ name: 'x' }),
          404,
          'NOT_FOUND',
          'template not found',
        );
        expectMailError(await request(t.url).patch(`/templates/${id}`).set(auth).send({}), 404, 'NOT_FOUND', 'template not found');
        expectMailError(await request(t.url).delete(`/templates/${id}`).set(auth), 404, 'NOT_FOUND', 'template not found');
      }
    });
  });

  describe('list', () => {
    let q: MailProjectCredentials;
    let qAuth: Record<string, string>;
    const ids: string[] = [];

    beforeAll(async () => {
      q = await createProject(t, 'Template list');
      qAuth = bearer(q.secretKey);
      const names = ['Order shipped', 'Order Delivered', 'Spring sale', 'Password reset', 'SUMMER SALE 100%'];
      for (const [i, name] of names.entries()) {
        const res = await request(t.url)
          .post('/templates')
          .set(qAuth)
          .send({ ...WELCOME, name, type: name.toLowerCase().includes('sale') ? 'MARKETING' : 'TRANSACTIONAL' })
          .expect(201);
        ids[i] = res.body.id;
      }
    });

    it('pages newest first by an opaque cursor, with the total', async () => {
      const first = await request(t.url).get('/templates?limit=2').set(qAuth).expect(200);
      expect(first.body).toEqual({
        items: [expect.objectContaining({ id: ids[4] }), expect.objectContaining({ id: ids[3] })],
        nextCursor: expect.any(String),
        hasMore: true,
        total: 5,
      });
      const second = await request(t.url).get(`/templates?limit=2&cursor=${first.body.nextCursor}`).set(qAuth).expect(200);
      expect(second.body.items.map((x: MailTemplate) => x.id)).toEqual([ids[2], ids[1]]);
      const last = await request(t.url).get(`/templates?limit=2&cursor=${second.body.nextCursor}`).set(qAuth).expect(200);
      expect(last.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextCursor: null, hasMore: false, total: 5 });
      const all = await request(t.url).get('/templates').set(qAuth).expect(200);
      expect(all.body.items).toHaveLength(5);
      expect(all.body.items[0]).toEqual({
        ...WELCOME,
        id: ids[4],
        name: 'SUMMER SALE 100%',
        type: 'MARKETING',
        description: null,
        from: null,
        fromName: null,
        replyTo: null,
        createdAt: ISO,
        updatedAt: ISO,
      });
    });

    it('filters by name substring (case-insensitive, LIKE characters literal) and type', async () => {
      const names = async (query: string) => (await request(t.url).get(`/templates?${query}`).set(qAuth).expect(200)).body;
      expect((await names('search=order')).items.map((x: MailTemplate) => x.name)).toEqual(['Order Delivered', 'Order shipped']);
      expect((await names('search=SALE')).total).toBe(2);
      expect((await names('search=100%25')).items.map((x: MailTemplate) => x.name)).toEqual(['SUMMER SALE 100%']);
      expect((await names('search=_')).total).toBe(0);
      expect((await names('type=MARKETING')).items.map((x: MailTemplate) => x.name)).toEqual(['SUMMER SALE 100%', 'Spring sale']);
      const both = await names('type=TRANSACTIONAL&search=order&limit=1');
      expect(both).toEqual({
        items: [expect.objectContaining({ name: 'Order Delivered' })],
        nextCursor: expect.any(String),
        hasMore: true,
        total: 2,
      });
    });

    it('422 for a bad limit, cursor or type', async () => {
      expectValidationError(await request(t.url).get('/templates?limit=0').set(qAuth), [{ field: 'limit', code: 'min' }]);
      expectValidationError(await request(t.url).get('/templates?limit=101').set(qAuth), [{ field: 'limit', code: 'max' }]);
      expectValidationError(await request(t.url).get('/templates?limit=x').set(qAuth), [
        { field: 'limit', code: 'isInt' },
        { field: 'limit', code: 'min' },
        { field: 'limit', code: 'max' },
      ]);
      expectValidationError(await request(t.url).get('/templates?cursor=nope').set(qAuth), [
        { field: 'cursor', code: 'isCursor', message: 'cursor is not a cursor this list returned' },
      ]);
      expectValidationError(await request(t.url).get('/templates?type=OTHER').set(qAuth), [
        { field: 'type', code: 'isIn', message: 'type must be one of the following values: TRANSACTIONAL, MARKETING' },
      ]);
    });

    it("another project's templates are invisible: list, get, patch and delete are 404", async () => {
      const mine = await request(t.url).get('/templates').set(auth).expect(200);
      expect(mine.body.items.map((x: MailTemplate) => x.id)).not.toContain(ids[0]);
      expectMailError(await request(t.url).get(`/templates/${ids[0]}`).set(auth), 404, 'NOT_FOUND', 'template not found');
      expectMailError(
        await request(t.url).patch(`/templates/${ids[0]}`).set(auth).send({ name: 'stolen' }),
        404,
        'NOT_FOUND',
        'template not found',
      );
      expectMailError(await request(t.url).delete(`/templates/${ids[0]}`).set(auth), 404, 'NOT_FOUND', 'template not found');
      expect((await request(t.url).get(`/templates/${ids[0]}`).set(qAuth).expect(200)).body.name).toBe('Order shipped');
    });
  });

  describe('validation', () => {
    it('missing required fields', async () => {
      expectValidationError(await create({}), [
        { field: 'name', code: 'isString', message: 'name must be a string' },
        { field: 'name', code: 'isLength' },
        { field: 'subject', code: 'isString' },
        { field: 'subject', code: 'isLength' },
        { field: 'body', code: 'isString' },
        { field: 'body', code: 'isByteLength', message: 'body must be 1 to 524288 bytes (512 KB) of UTF-8' },
      ]);
    });

    it('each field rule, one at a time', async () => {
      const cases: [object, { field: string; code: string; message?: string }][] = [
        [{ name: '   ' }, { field: 'name', code: 'isLength', message: 'name must be longer than or equal to 1 characters' }],
        [{ name: 'n'.repeat(201) }, { field: 'name', code: 'isLength', message: 'name must be shorter than or equal to 200 characters' }],
        [{ name: 'a\u0000b' }, { field: 'name', code: 'hasNoNulCharacter', message: 'name must not contain NUL characters' }],
        [
          { subject: 's'.repeat(999) },
          { field: 'subject', code: 'isLength', message: 'subject must be shorter than or equal to 998 characters' },
        ],
        [
          { subject: 'Hi\r\nBcc: x@example.com' },
          { field: 'subject', code: 'hasNoLineBreaks', message: 'subject must not contain line breaks (CR or LF)' },
        ],
        [{ subject: 'line\nbreak' }, { field: 'subject', code: 'hasNoLineBreaks' }],
        [{ body: '' }, { field: 'body', code: 'isByteLength' }],
        [{ body: 'x'.repeat(512 * 1024 + 1) }, { field: 'body', code: 'isByteLength' }],
        // 512 KB counts bytes: 2-byte characters reach it at half the length.
        [{ body: 'é'.repeat(256 * 1024 + 1) }, { field: 'body', code: 'isByteLength' }],
        [{ from: 'not-an-email' }, { field: 'from', code: 'isEmail', message: 'from must be an email' }],
        [{ replyTo: 'nope@' }, { field: 'replyTo', code: 'isEmail', message: 'replyTo must be an email' }],
        [
          { fromName: 'n'.repeat(201) },
          { field: 'fromName', code: 'maxLength', message: 'fromName must be shorter than or equal to 200 characters' },
        ],
        [
          { fromName: 'Evil\nName' },
          { field: 'fromName', code: 'hasNoLineBreaks', message: 'fromName must not contain line breaks (CR or LF)' },
        ],
        [{ type: 'transactional' }, { field: 'type', code: 'isIn' }],
        [
          { description: 'd'.repeat(2001) },
          { field: 'description', code: 'maxLength', message: 'description must be shorter than or equal to 2000 characters' },
        ],
      ];
      for (const [override, error] of cases) expectValidationError(await create({ ...WELCOME, ...override }), [error]);
      expectValidationError(await create({ ...WELCOME, body: 42 }), [
        { field: 'body', code: 'isString', message: 'body must be a string' },
        { field: 'body', code: 'isByteLength' },
      ]);
    });

    it('the limits themselves are accepted', async () => {
      const res = await create({
        name: 'n'.repeat(200),
        subject: 's'.repeat(998),
        body: 'é'.repeat(256 * 1024),
        fromName: 'f'.repeat(200),
        description: 'd'.repeat(2000),
      }).expect(201);
      expect(res.body.body).toHaveLength(256 * 1024);
    });

    it('malformed placeholders in subject or body: 422 invalidPlaceholder naming the problem', async () => {
      expectValidationError(await create({ ...WELCOME, body: '<p>Hi {{ name</p>' }), [
        {
          field: 'body',
          code: 'invalidPlaceholder',
          message: 'body has an invalid placeholder: unclosed placeholder "{{ name</p>" at line 1, column 7: "{{" without "}}"',
        },
      ]);
      expectValidationError(await create({ ...WELCOME, subject: 'Hi {{ }}' }), [
        {
          field: 'subject',
          code: 'invalidPlaceholder',
          message: 'subject has an invalid placeholder: empty placeholder "{{ }}" at line 1, column 4',
        },
      ]);
      expectValidationError(await create({ ...WELCOME, subject: '{{first name}}', body: '<p>\n{{ a..b }} {{ ?? x }}</p>' }), [
        {
          field: 'subject',
          code: 'invalidPlaceholder',
          message: /^subject has an invalid placeholder: invalid placeholder name in "\{\{first name\}\}"/,
        },
        {
          field: 'body',
          code: 'invalidPlaceholder',
          message:
            'body has invalid placeholders: invalid placeholder name in "{{ a..b }}" at line 2, column 1: use letters, digits, "_" and "-", ' +
            'with dots between segments; empty placeholder "{{ ?? x }}" at line 2, column 12',
        },
      ]);
      const patched = await create(WELCOME).expect(201);
      expectValidationError(await request(t.url).patch(`/templates/${patched.body.id}`).set(auth).send({ body: '{{ user.$name }}' }), [
        { field: 'body', code: 'invalidPlaceholder' },
      ]);
    });

    it('400 for malformed JSON', async () => {
      const res = await request(t.url).post('/templates').set(auth).set('Content-Type', 'application/json').send('{"name": ');
      expectMailError(res, 400, 'INVALID_JSON', 'malformed JSON body');
    });
  });

  it('the public key is refused on every route: 403 SECRET_KEY_REQUIRED', async () => {
    const existing = await create(WELCOME).expect(201);
    const attempts = [
      request(t.url).get('/templates'),
      request(t.url).post('/templates').send(WELCOME),
      request(t.url).get(`/templates/${existing.body.id}`),
      request(t.url).patch(`/templates/${existing.body.id}`).send({ name: 'x' }),
      request(t.url).delete(`/templates/${existing.body.id}`),
    ];
    for (const attempt of attempts) {
      expectMailError(
        await attempt.set(bearer(p.publicKey)),
        403,
        'SECRET_KEY_REQUIRED',
        'this endpoint requires the secret key (sk_...); public keys only work on POST /v1/track',
      );
    }
    expect((await request(t.url).get(`/templates/${existing.body.id}`).set(auth).expect(200)).body.name).toBe('Welcome');
    expect((await request(t.url).get('/templates')).status).toBe(401);
  });
});
