import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { MailProjectCredentials } from '@app/contracts';
import { DataSource } from 'typeorm';
import { ProjectsService } from '../src/modules/projects/projects.service.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const KEY_SUGGESTION = "send `Authorization: Bearer <key>` with your project's secret key (sk_...)";
const track = { email: 'visitor@example.com', event: 'page-viewed' };

async function disable(t: MailTestApp, projectId: string, disabled = true): Promise<void> {
  await t.app.get(DataSource).query(`UPDATE projects SET disabled = $2 WHERE id = $1`, [projectId, disabled]);
}

describe('mail API keys (default 30 s key cache)', () => {
  let t: MailTestApp;
  let project: MailProjectCredentials;
  beforeAll(async () => {
    t = await startMailApp();
    project = await createProject(t, 'Keys');
  });
  afterAll(async () => {
    await t.close();
  });

  it('no Authorization header is 401 UNAUTHORIZED', async () => {
    for (const req of [
      request(t.url).get('/contacts'),
      request(t.url).post('/v1/track').send(track),
      request(t.url).get('/contacts').set('Authorization', '  '),
    ]) {
      const res = await req;
      expectMailError(res, 401, 'UNAUTHORIZED', 'missing API key', { suggestion: KEY_SUGGESTION });
    }
  });

  it('a malformed or unknown key is 401 INVALID_API_KEY', async () => {
    const headers = [
      `Basic ${Buffer.from('user:pw').toString('base64')}`,
      `Bearer`,
      `Bearer sk_short`,
      `Bearer ${project.secretKey.toUpperCase()}`,
      `Bearer ${project.secretKey} extra`,
      `Bearer xk_${project.secretKey.slice(3)}`,
      `Bearer sk_${'0'.repeat(48)}`, // well-formed, no such project
      `Bearer sk_${project.publicKey.slice(3)}`, // the public key's random part under the secret prefix
      project.secretKey, // no scheme
    ];
    for (const header of headers) {
      const res = await request(t.url).get('/contacts').set('Authorization', header);
      expectMailError(res, 401, 'INVALID_API_KEY', 'invalid API key', { suggestion: KEY_SUGGESTION });
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  it('the secret key opens every route; the scheme is case-insensitive', async () => {
    await request(t.url).get('/contacts').set(bearer(project.secretKey)).expect(200);
    await request(t.url).get('/contacts').set('Authorization', `bearer ${project.secretKey}`).expect(200);
    await request(t.url).get('/events').set(bearer(project.secretKey)).expect(200);
    await request(t.url).post('/v1/track').set(bearer(project.secretKey)).send(track).expect(200);
    await request(t.url).post('/v1/verify').set(bearer(project.secretKey)).send({ email: 'not an address' }).expect(200);
  });

  it('the public key works on POST /v1/track only: elsewhere 403 SECRET_KEY_REQUIRED', async () => {
    const ok = await request(t.url).post('/v1/track').set(bearer(project.publicKey)).send(track).expect(200);
    expect(ok.body.success).toBe(true);
    const attempts = [
      request(t.url).get('/contacts'),
      request(t.url).post('/contacts').send({ email: 'x@example.com' }),
      request(t.url).get(`/contacts/${ok.body.data.contact}`),
      request(t.url).delete(`/contacts/${ok.body.data.contact}`),
      request(t.url).get('/events'),
      request(t.url).get('/events/names'),
      request(t.url).post('/v1/verify').send({ email: 'a@example.com' }),
    ];
    for (const attempt of attempts) {
      const res = await attempt.set(bearer(project.publicKey));
      expectMailError(
        res,
        403,
        'SECRET_KEY_REQUIRED',
        'this endpoint requires the secret key (sk_...); public keys only work on POST /v1/track',
      );
    }
    // Nothing happened: the contact is still there.
    await request(t.url).get(`/contacts/${ok.body.data.contact}`).set(bearer(project.secretKey)).expect(200);
  });

  it('a disabled project is 403 PROJECT_DISABLED for both keys', async () => {
    const off = await createProject(t, 'Disabled before first use');
    await disable(t, off.id);
    for (const [key, path] of [
      [off.secretKey, '/contacts'],
      [off.publicKey, '/contacts'],
    ] as const) {
      expectMailError(await request(t.url).get(path).set(bearer(key)), 403, 'PROJECT_DISABLED', 'project is disabled');
    }
    expectMailError(
      await request(t.url).post('/v1/track').set(bearer(off.publicKey)).send(track),
      403,
      'PROJECT_DISABLED',
      'project is disabled',
    );
  });

  it('probes, docs and the OpenAPI document need no key', async () => {
    await request(t.url).get('/healthz').expect(200);
    await request(t.url).get('/readyz').expect(200);
    await request(t.url).get('/docs').redirects(1).expect(200);
    const doc = await request(t.url).get('/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/contacts', '/contacts/{id}', '/events', '/events/names', '/v1/track', '/v1/verify']),
    );
    expect(doc.body.info.description).toContain('SECRET_KEY_REQUIRED');
    expect(doc.body.info.description).toContain('RateLimit-Remaining');
  });

  it("every query is scoped to the key's project: another project's contact is a 404", async () => {
    const a = await createProject(t, 'A');
    const b = await createProject(t, 'B');
    const created = await request(t.url)
      .post('/contacts')
      .set(bearer(a.secretKey))
      .send({ email: 'shared@example.com', data: { owner: 'a' } })
      .expect(201);
    const id = created.body.id;
    expectMailError(await request(t.url).get(`/contacts/${id}`).set(bearer(b.secretKey)), 404, 'NOT_FOUND', 'contact not found');
    expectMailError(
      await request(t.url).patch(`/contacts/${id}`).set(bearer(b.secretKey)).send({ subscribed: false }),
      404,
      'NOT_FOUND',
      'contact not found',
    );
    expectMailError(await request(t.url).delete(`/contacts/${id}`).set(bearer(b.secretKey)), 404, 'NOT_FOUND', 'contact not found');
    expect((await request(t.url).get('/contacts').set(bearer(b.secretKey)).expect(200)).body).toEqual({
      contacts: [],
      cursor: null,
      hasMore: false,
      total: 0,
    });
    // The same email in B is B's own contact.
    const inB = await request(t.url).post('/contacts').set(bearer(b.secretKey)).send({ email: 'SHARED@example.com' }).expect(201);
    expect(inB.body.id).not.toBe(id);
    expect(inB.body.data).toEqual({});
    await request(t.url).post('/v1/track').set(bearer(b.publicKey)).send({ email: 'shared@example.com', event: 'b-only' }).expect(200);
    const eventsOfA = await request(t.url).get('/events').set(bearer(a.secretKey)).expect(200);
    expect(eventsOfA.body.total).toBe(0);
    const a1 = await request(t.url).get(`/contacts/${id}`).set(bearer(a.secretKey)).expect(200);
    expect(a1.body).toMatchObject({ email: 'shared@example.com', subscribed: true, data: { owner: 'a' } });
  });

  it('browsers may call /v1/track cross-origin; other routes send no CORS headers', async () => {
    const preflight = await request(t.url)
      .options('/v1/track')
      .set('Origin', 'https://shop.example')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization,content-type')
      .expect(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);
    const tracked = await request(t.url)
      .post('/v1/track')
      .set('Origin', 'https://shop.example')
      .set(bearer(project.publicKey))
      .send(track)
      .expect(200);
    expect(tracked.headers['access-control-allow-origin']).toBe('*');
    const other = await request(t.url).get('/contacts').set('Origin', 'https://shop.example').set(bearer(project.secretKey)).expect(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('mail API keys with a short key cache (MAIL_KEY_CACHE_TTL_SECONDS=3)', () => {
  const TTL_SECONDS = 3;
  let t: MailTestApp;
  beforeAll(async () => {
    t = await startMailApp({ env: { MAIL_KEY_CACHE_TTL_SECONDS: String(TTL_SECONDS) } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a key cached before its project was disabled is accepted until the TTL ends, then 403 PROJECT_DISABLED', async () => {
    const p = await createProject(t, 'Cached');
    // The first use looks the key up and caches it; the entry expires TTL_SECONDS after this lookup.
    await request(t.url).get('/contacts').set(bearer(p.secretKey)).expect(200);
    const cachedBy = Date.now();
    await disable(t, p.id);
    // Served from the in-process cache, while a lookup already finds the project disabled: the public
    // key, never used before, is looked up now and refused.
    await request(t.url).get('/contacts').set(bearer(p.secretKey)).expect(200);
    expectMailError(
      await request(t.url).post('/v1/track').set(bearer(p.publicKey)).send(track),
      403,
      'PROJECT_DISABLED',
      'project is disabled',
    );
    await new Promise((r) => setTimeout(r, cachedBy + TTL_SECONDS * 1000 + 300 - Date.now()));
    expectMailError(await request(t.url).get('/contacts').set(bearer(p.secretKey)), 403, 'PROJECT_DISABLED', 'project is disabled');
  });
});

describe('mail API keys with the key cache off (MAIL_KEY_CACHE_TTL_SECONDS=0)', () => {
  let t: MailTestApp;
  beforeAll(async () => {
    t = await startMailApp({ env: { MAIL_KEY_CACHE_TTL_SECONDS: '0' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('disabling, re-enabling and rotating take effect on the next request', async () => {
    const p = await createProject(t, 'Live');
    await request(t.url).get('/contacts').set(bearer(p.secretKey)).expect(200);
    await disable(t, p.id);
    expectMailError(await request(t.url).get('/contacts').set(bearer(p.secretKey)), 403, 'PROJECT_DISABLED', 'project is disabled');
    await disable(t, p.id, false);
    await request(t.url).get('/contacts').set(bearer(p.secretKey)).expect(200);
    const rotated = await t.app.get(ProjectsService).rotateKeys(p.id);
    expectMailError(await request(t.url).get('/contacts').set(bearer(p.secretKey)), 401, 'INVALID_API_KEY', 'invalid API key', {
      suggestion: KEY_SUGGESTION,
    });
    await request(t.url).get('/contacts').set(bearer(rotated.secretKey)).expect(200);
  });
});
