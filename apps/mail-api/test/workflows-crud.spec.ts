import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { guardedLookup } from '@app/service-kit';
import type { MailConfig } from '../src/config/mail-config.js';
import { WebhookClient } from '../src/modules/workflows/webhook-client.js';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { createWorkflow, startWebhookReceiver, type WebhookReceiver } from './support/workflow-test-kit.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** POST /workflows, PATCH, GET, DELETE and the executions list's guards: shapes, validation as a graph, isolation. */
describe('workflows API (CRUD and validation)', () => {
  let t: MailTestApp;
  let db: DataSource;
  let project: MailProjectCredentials;
  let other: MailProjectCredentials;
  let auth: Record<string, string>;
  let templateId: string;

  beforeAll(async () => {
    t = await startMailApp();
    db = t.app.get(DataSource);
    project = await createProject(t);
    other = await createProject(t, 'Other');
    auth = bearer(project.secretKey);
    const template = await request(t.url)
      .post('/templates')
      .set(auth)
      .send({ name: 'T', subject: 'S', body: '<p>B</p>', from: 'a@example.com' })
      .expect(201);
    templateId = template.body.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (body: unknown, key = project.secretKey) =>
    request(t.url)
      .post('/workflows')
      .set(bearer(key))
      .send(body as object);
  const exit = { id: 'end', type: 'EXIT', config: {} };
  const base = { name: 'W', eventName: 'signed-up' };
  /** A 422 for exactly these fields and codes, with `steps` as given. */
  const invalid = async (steps: unknown, fields: { field: string; code: string }[]) =>
    expectValidationError(await post({ ...base, steps }), fields);

  it('creates a workflow: 201 with defaults, normalized steps and the webhook secret, which no other response shows', async () => {
    const res = await post({
      name: '  Onboarding ',
      eventName: 'signed-up',
      steps: [
        { id: 'send', type: 'SEND_EMAIL', config: { templateId }, next: 'wait' },
        { id: 'wait', type: 'WAIT_FOR_EVENT', config: { eventName: ' purchased ', timeoutSeconds: 3600 }, next: 'hook' },
        { id: 'hook', type: 'WEBHOOK', config: { url: 'https://hooks.example.com/x' } },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Onboarding',
      description: null,
      eventName: 'signed-up',
      enabled: false,
      allowReentry: false,
      steps: [
        { id: 'send', type: 'SEND_EMAIL', config: { templateId }, next: 'wait' },
        { id: 'wait', type: 'WAIT_FOR_EVENT', config: { eventName: 'purchased', timeoutSeconds: 3600 }, next: 'hook', onTimeout: null },
        { id: 'hook', type: 'WEBHOOK', config: { url: 'https://hooks.example.com/x', method: 'POST' }, next: null },
      ],
      webhookSecret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/),
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const { webhookSecret, ...workflow } = res.body;
    const got = await request(t.url).get(`/workflows/${workflow.id}`).set(auth).expect(200);
    expect(got.body).toEqual(workflow);
    const listed = await request(t.url).get('/workflows').set(auth).expect(200);
    expect(listed.body.items.find((w: { id: string }) => w.id === workflow.id)).toEqual(workflow);
    // Stored sealed (it must sign, so it is encrypted, not hashed): the database never holds it in clear.
    const [row] = await db.query(`SELECT webhook_secret FROM workflows WHERE id = $1`, [workflow.id]);
    expect(row.webhook_secret).toMatch(/^v1:/);
    expect(row.webhook_secret).not.toContain(webhookSecret.slice(6));
  });

  it('PATCH changes the fields given (steps validated again), DELETE answers 204 and the workflow is gone', async () => {
    const created = await createWorkflow(t, project.secretKey, { ...base, description: 'd', steps: [exit] });
    const patched = await request(t.url)
      .patch(`/workflows/${created.id}`)
      .set(auth)
      .send({ name: 'Renamed', description: null, enabled: true, allowReentry: true, eventName: 'ordered' })
      .expect(200);
    expect(patched.body).toMatchObject({
      name: 'Renamed',
      description: null,
      enabled: true,
      allowReentry: true,
      eventName: 'ordered',
      steps: [exit],
    });
    expect(patched.body).not.toHaveProperty('webhookSecret');
    const steps = [{ id: 'pause', type: 'DELAY', config: { amount: 5, unit: 'minutes' }, next: 'end' }, exit];
    const withSteps = await request(t.url).patch(`/workflows/${created.id}`).set(auth).send({ steps }).expect(200);
    expect(withSteps.body.steps).toEqual([{ ...steps[0] }, exit]);
    expectValidationError(
      await request(t.url)
        .patch(`/workflows/${created.id}`)
        .set(auth)
        .send({ steps: [{ ...exit, next: 'x' }] }),
      [{ field: 'steps[0].next', code: 'linkNotAllowed' }],
    );
    expectValidationError(await request(t.url).patch(`/workflows/${created.id}`).set(auth).send({ name: null, enabled: 'yes' }), [
      { field: 'name', code: 'isString' },
      { field: 'name', code: 'isNotEmpty' },
      { field: 'name', code: 'maxLength' },
      { field: 'enabled', code: 'isBoolean' },
    ]);
    const unchanged = await request(t.url).patch(`/workflows/${created.id}`).set(auth).send({}).expect(200);
    expect(unchanged.body).toEqual(withSteps.body);

    await request(t.url).delete(`/workflows/${created.id}`).set(auth).expect(204);
    expectMailError(await request(t.url).get(`/workflows/${created.id}`).set(auth), 404, 'NOT_FOUND', 'workflow not found');
    expectMailError(await request(t.url).delete(`/workflows/${created.id}`).set(auth), 404, 'NOT_FOUND', 'workflow not found');
    expectMailError(
      await request(t.url).patch(`/workflows/${created.id}`).set(auth).send({ name: 'x' }),
      404,
      'NOT_FOUND',
      'workflow not found',
    );
    const listed = await request(t.url).get('/workflows?limit=100').set(auth).expect(200);
    expect(listed.body.items.map((w: { id: string }) => w.id)).not.toContain(created.id);
  });

  it('lists newest first with cursors, `enabled` and `eventName` filters', async () => {
    const fresh = await createProject(t, 'Lists');
    const key = fresh.secretKey;
    const a = await createWorkflow(t, key, { ...base, name: 'a', steps: [exit], enabled: true });
    const b = await createWorkflow(t, key, { ...base, name: 'b', eventName: 'other', steps: [exit] });
    const c = await createWorkflow(t, key, { ...base, name: 'c', steps: [exit] });
    const page1 = await request(t.url).get('/workflows?limit=2').set(bearer(key)).expect(200);
    expect(page1.body).toMatchObject({ hasMore: true, total: 3, nextCursor: expect.any(String) });
    expect(page1.body.items.map((w: { id: string }) => w.id)).toEqual([c.id, b.id]);
    const page2 = await request(t.url).get(`/workflows?limit=2&cursor=${page1.body.nextCursor}`).set(bearer(key)).expect(200);
    expect(page2.body).toMatchObject({ hasMore: false, total: 3, nextCursor: null, items: [expect.objectContaining({ id: a.id })] });
    const enabled = await request(t.url).get('/workflows?enabled=true').set(bearer(key)).expect(200);
    expect(enabled.body.items.map((w: { id: string }) => w.id)).toEqual([a.id]);
    const byEvent = await request(t.url).get('/workflows?eventName=other').set(bearer(key)).expect(200);
    expect(byEvent.body.items.map((w: { id: string }) => w.id)).toEqual([b.id]);
    expectValidationError(await request(t.url).get('/workflows?enabled=maybe&limit=101&cursor=zzz').set(bearer(key)), [
      { field: 'enabled', code: 'isBoolean' },
      { field: 'limit', code: 'max' },
      { field: 'cursor', code: 'isCursor' },
    ]);
  });

  it("another project's workflow is a 404 everywhere; a public key is refused", async () => {
    const mine = await createWorkflow(t, project.secretKey, { ...base, steps: [exit] });
    const key = other.secretKey;
    for (const res of [
      await request(t.url).get(`/workflows/${mine.id}`).set(bearer(key)),
      await request(t.url).patch(`/workflows/${mine.id}`).set(bearer(key)).send({ enabled: true }),
      await request(t.url).delete(`/workflows/${mine.id}`).set(bearer(key)),
      await request(t.url).get(`/workflows/${mine.id}/executions`).set(bearer(key)),
      await request(t.url).get(`/workflows/not-a-uuid`).set(bearer(key)),
      await request(t.url).get(`/workflows/not-a-uuid/executions`).set(bearer(key)),
    ]) {
      expectMailError(res, 404, 'NOT_FOUND', 'workflow not found');
    }
    const theirs = await request(t.url).get('/workflows?limit=100').set(bearer(key)).expect(200);
    expect(theirs.body.items.map((w: { id: string }) => w.id)).not.toContain(mine.id);
    expect((await request(t.url).get(`/workflows/${mine.id}`).set(auth).expect(200)).body.enabled).toBe(false);
    // A template of another project cannot be sent from here.
    await invalid(
      [{ id: 's', type: 'SEND_EMAIL', config: { templateId: randomUUIDv4() } }],
      [{ field: 'steps[0].config.templateId', code: 'templateNotFound' }],
    );
    expectValidationError(await post({ ...base, steps: [{ id: 's', type: 'SEND_EMAIL', config: { templateId } }] }, key), [
      { field: 'steps[0].config.templateId', code: 'templateNotFound' },
    ]);
    const publicKey = await request(t.url).get('/workflows').set(bearer(project.publicKey));
    expect(publicKey.status).toBe(403);
  });

  it('422 for missing fields and malformed step lists', async () => {
    expectValidationError(await post({}), [
      { field: 'name', code: 'isString' },
      { field: 'name', code: 'isNotEmpty' },
      { field: 'name', code: 'maxLength' },
      { field: 'eventName', code: 'isString' },
      { field: 'eventName', code: 'isNotEmpty' },
      { field: 'eventName', code: 'maxLength' },
      { field: 'steps', code: 'isDefined' },
    ]);
    await invalid({ id: 'x' }, [{ field: 'steps', code: 'isArray' }]);
    await invalid([], [{ field: 'steps', code: 'arrayMinSize' }]);
    await invalid(
      Array.from({ length: 101 }, (_, i) => ({ id: `s${i}`, type: 'EXIT', config: {} })),
      [{ field: 'steps', code: 'arrayMaxSize' }],
    );
    await invalid(
      ['x', null],
      [
        { field: 'steps[0]', code: 'isObject' },
        { field: 'steps[1]', code: 'isObject' },
      ],
    );
    await invalid(
      [{ id: 'bad id!', type: 'NOPE', config: {}, extra: 1 }],
      [
        { field: 'steps[0].extra', code: 'whitelistValidation' },
        { field: 'steps[0].id', code: 'isStepId' },
        { field: 'steps[0].type', code: 'isIn' },
      ],
    );
  });

  it('422 naming the link for unknown step ids and duplicate ids', async () => {
    await invalid(
      [
        { id: 'a', type: 'DELAY', config: { amount: 1, unit: 'hours' }, next: 'ghost' },
        { id: 'b', type: 'CONDITION', config: { field: 'subscribed', operator: 'equals', value: true }, onTrue: 'nope', onFalse: 'a' },
        { id: 'c', type: 'WAIT_FOR_EVENT', config: { eventName: 'x', timeoutSeconds: 60 }, next: 'a', onTimeout: 'gone' },
      ],
      [
        { field: 'steps[0].next', code: 'unknownStepId' },
        { field: 'steps[1].onTrue', code: 'unknownStepId' },
        { field: 'steps[2].onTimeout', code: 'unknownStepId' },
      ],
    );
    await invalid([exit, { ...exit }], [{ field: 'steps[1].id', code: 'duplicateStepId' }]);
    await invalid(
      [{ id: 'x', type: 'SEND_EMAIL', config: { templateId }, onTrue: 'x' }],
      [{ field: 'steps[0].onTrue', code: 'linkNotAllowed' }],
    );
  });

  it('422 for a cycle through no DELAY or WAIT_FOR_EVENT step; cycles with a pause are fine', async () => {
    const update = (id: string, next: string | null) => ({ id, type: 'UPDATE_CONTACT', config: { subscribed: true }, next });
    const res = await post({
      ...base,
      steps: [update('a', 'b'), { id: 'b', type: 'WEBHOOK', config: { url: 'https://h.example.com' }, next: 'a' }],
    });
    expectValidationError(res, [{ field: 'steps[1].next', code: 'cycleWithoutPause' }]);
    expect(res.body.error.errors[0].message).toBe('steps a -> b -> a form a cycle with no DELAY or WAIT_FOR_EVENT step in it');
    await invalid(
      [
        { id: 'loop', type: 'CONDITION', config: { field: 'email', operator: 'contains', value: '@' }, onTrue: 'end', onFalse: 'loop' },
        exit,
      ],
      [{ field: 'steps[0].onFalse', code: 'cycleWithoutPause' }],
    );
    // A long chain closing on itself, 100 steps.
    await invalid(
      Array.from({ length: 100 }, (_, i) => update(`s${i}`, `s${(i + 1) % 100}`)),
      [{ field: 'steps[99].next', code: 'cycleWithoutPause' }],
    );
    const paused = await post({
      ...base,
      steps: [update('a', 'pause'), { id: 'pause', type: 'DELAY', config: { amount: 1, unit: 'days' }, next: 'a' }],
    });
    expect(paused.status).toBe(201);
    const waited = await post({
      ...base,
      steps: [
        update('a', 'w'),
        { id: 'w', type: 'WAIT_FOR_EVENT', config: { eventName: 'ping', timeoutSeconds: 60 }, next: null, onTimeout: 'a' },
      ],
    });
    expect(waited.status).toBe(201);
  });

  it('422 with the config field path for configs that do not validate', async () => {
    await invalid(
      [
        { id: 's', type: 'SEND_EMAIL', config: { templateId: 'nope' }, next: 'd' },
        { id: 'd', type: 'DELAY', config: { amount: 0, unit: 'weeks' }, next: 'd2' },
        { id: 'd2', type: 'DELAY', config: { amount: 400, unit: 'days' }, next: 'w' },
        { id: 'w', type: 'WAIT_FOR_EVENT', config: { eventName: '', timeoutSeconds: 1.5 }, next: 'c' },
        { id: 'c', type: 'CONDITION', config: { field: 'subscribed', operator: 'contains', value: 'x' }, onTrue: 'h', onFalse: 'u' },
        {
          id: 'h',
          type: 'WEBHOOK',
          config: { url: 'ftp://example.com', method: 'GET', headers: { 'X-Webhook-Signature': 'forged', 'Bad Name': 'x' } },
        },
        { id: 'u', type: 'UPDATE_CONTACT', config: { color: 'red' } },
      ],
      [
        { field: 'steps[0].config.templateId', code: 'isUuid' },
        { field: 'steps[1].config.unit', code: 'isIn' },
        { field: 'steps[1].config.amount', code: 'isInt' },
        { field: 'steps[2].config.amount', code: 'isInt' },
        { field: 'steps[3].config.eventName', code: 'isEventName' },
        { field: 'steps[3].config.timeoutSeconds', code: 'isInt' },
        { field: 'steps[4].config.operator', code: 'operatorNotAllowedForField' },
        { field: 'steps[5].config.url', code: 'isUrl' },
        { field: 'steps[5].config.method', code: 'isIn' },
        { field: 'steps[5].config.headers.X-Webhook-Signature', code: 'reservedHeader' },
        { field: 'steps[5].config.headers.Bad Name', code: 'isHeaderName' },
        { field: 'steps[6].config.color', code: 'whitelistValidation' },
        { field: 'steps[6].config', code: 'isNotEmpty' },
      ],
    );
    await invalid(
      [
        { id: 'u', type: 'UPDATE_CONTACT', config: { data: { ok: 1, nested: { deep: true } }, subscribed: 'yes' }, next: 'h' },
        { id: 'h', type: 'WEBHOOK', config: { url: 'https://user:pw@example.com/x', body: { blob: 'x'.repeat(70_000) } } },
      ],
      [
        { field: 'steps[0].config.subscribed', code: 'isBoolean' },
        { field: 'steps[0].config.data', code: 'isContactData' },
        { field: 'steps[1].config.url', code: 'isUrl' },
        { field: 'steps[1].config.body', code: 'maxSize' },
      ],
    );
    // The error list is bounded however many steps are wrong.
    const res = await post({ ...base, steps: Array.from({ length: 100 }, (_, i) => ({ id: `d${i}`, type: 'DELAY', config: {} })) });
    expect(res.status).toBe(422);
    expect(res.body.error.errors).toHaveLength(20);
  });

  it('crafted bodies: oversized requests, names and huge step configs are refused without harm', async () => {
    const huge = await post({
      ...base,
      steps: [{ id: 'h', type: 'WEBHOOK', config: { url: 'https://e.example', body: 'x'.repeat(1_100_000) } }],
    });
    expect(huge.status).toBe(413);
    expectValidationError(await post({ ...base, name: 'n'.repeat(201), eventName: 'e'.repeat(129), steps: [exit] }), [
      { field: 'name', code: 'maxLength' },
      { field: 'eventName', code: 'maxLength' },
    ]);
    const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    const hook = (body: unknown) => ({ ...base, steps: [{ id: 'h', type: 'WEBHOOK', config: { url: 'https://e.example', body } }] });
    const before = await request(t.url).get('/workflows?limit=1').set(auth).expect(200);
    // Nesting the HTTP layer refuses before anything recursive runs; a body within its depth is fine.
    expect([400, 422]).toContain((await post(hook(nested(5000)))).status);
    expect((await request(t.url).get('/workflows?limit=1').set(auth).expect(200)).body.total).toBe(before.body.total);
    expect((await post(hook(nested(50)))).status).toBe(201);
  });

  it('in production, webhook URLs naming private or loopback addresses are refused unless MAIL_WEBHOOK_ALLOW_PRIVATE=true', async () => {
    const secrets = {
      NODE_ENV: 'production',
      MAIL_LINK_SECRET: randomBytes(32).toString('hex'),
      MAIL_SECRETS_KEY: randomBytes(32).toString('hex'),
    };
    const prod = await startMailApp({ env: secrets });
    try {
      const key = (await createProject(prod)).secretKey;
      const hook = (url: string) => ({ ...base, steps: [{ id: 'h', type: 'WEBHOOK', config: { url } }] });
      for (const url of [
        'http://127.0.0.1:8080/x',
        'http://[::1]/x',
        'http://10.1.2.3/',
        'http://169.254.169.254/latest',
        'http://localhost/x',
        'http://[::ffff:192.168.0.1]/',
      ]) {
        const res = await request(prod.url).post('/workflows').set(bearer(key)).send(hook(url));
        expectValidationError(res, [{ field: 'steps[0].config.url', code: 'privateAddress' }]);
      }
      await request(prod.url).post('/workflows').set(bearer(key)).send(hook('https://hooks.example.com/x')).expect(201);
    } finally {
      await prod.close();
    }
    const allowed = await startMailApp({ env: { ...secrets, MAIL_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    try {
      const key = (await createProject(allowed)).secretKey;
      await request(allowed.url)
        .post('/workflows')
        .set(bearer(key))
        .send({ ...base, steps: [{ id: 'h', type: 'WEBHOOK', config: { url: 'http://127.0.0.1:8080/x' } }] })
        .expect(201);
    } finally {
      await allowed.close();
    }
  });

  describe('the webhook client in production', () => {
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      receiver = await startWebhookReceiver();
    });
    afterAll(async () => {
      await receiver?.close();
    });
    const client = (allowPrivate: boolean) =>
      new WebhookClient({
        env: 'production',
        workflows: { webhookAllowPrivate: allowPrivate, webhookTimeoutMs: 1000, webhookRetryBaseMs: 10, sweepSeconds: 30, concurrency: 1 },
      } as MailConfig);
    const send = (c: WebhookClient, url: string) =>
      c.send({ url, method: 'POST', headers: {}, body: '{}', secret: 's', deliveryId: 'd', attempt: 1 });

    it('refuses loopback targets, literal or by name, and checks every address a name resolves to', async () => {
      const port = new URL(receiver.url).port;
      expect(await send(client(false), `http://127.0.0.1:${port}/a`)).toEqual({
        ok: false,
        error: 'refused: 127.0.0.1 is a private or loopback address',
      });
      expect(await send(client(false), `http://localhost:${port}/a`)).toEqual({
        ok: false,
        error: 'refused: localhost is a private or loopback address',
      });
      expect(receiver.requests).toHaveLength(0);
      // The resolver guard itself, on a name that resolves to loopback.
      const error = await new Promise<Error | null>((resolve) => guardedLookup('localhost', {}, (err) => resolve(err)));
      expect(error?.message).toBe('refused: localhost resolves to a private or loopback address');
      // Allowed: it connects.
      expect(await send(client(true), `http://127.0.0.1:${port}/a`)).toEqual({ ok: true, status: 200 });
      expect(receiver.requests).toHaveLength(1);
    });
  });
});

function randomUUIDv4(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}
