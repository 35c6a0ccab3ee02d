import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Server } from 'node:http';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import express from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { DEFAULT_BODY_LIMIT, readRequestBody } from '@app/service-kit';
import { parsePrometheusText, sampleValue } from '@app/service-kit/testing';
import { AccessAuthenticator } from '../src/core/auth/access-authenticator.service.js';
import { FeatureCheckDto } from '../src/modules/auth/auth.dto.js';
import { acceptedFeatures, FeatureCheckFastPath } from '../src/modules/auth/feature-check-fast-path.js';
import { ProfileService } from '../src/modules/auth/profile.service.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const METRICS_TOKEN = 'fast-path-metrics-token-0123456789';

/**
 * `POST /auth/feature-check` is answered in front of its Nest route when the answer is certain
 * (FeatureCheckFastPath, issue #34). It must answer exactly what the route answers, and leave every
 * other request, refusals included, to the route.
 */
describe('POST /auth/feature-check: the early answer in front of the route', () => {
  let t: PlatformTestApp;
  let f: Factories;
  beforeAll(async () => {
    t = await startPlatformApp({ env: { METRICS_TOKEN } });
    f = Factories.of(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const check = (auth: Record<string, string>, body: object) => request(t.url).post('/auth/feature-check').set(auth).send(body);

  it('answers what the route answers, for role ACLs, wildcards, a user ACL and a super administrator', async () => {
    const roleCaller = await f.loggedInUser(t, { features: ['auth.roles.*', 'directory.tenants.view'] });
    const admin = await f.loggedInUser(t, { isSuperAdmin: true });
    const overridden = await f.loggedInUser(t, { features: ['auth.*'] }, roleCaller.tenant);
    const manager = await f.loggedInUser(t, { features: ['auth.acl.manage', 'auth.roles.*'] }, roleCaller.tenant);
    // A user ACL replaces the role ACLs (decisions.md "Resolution"): only auth.roles.list is left.
    await request(t.url)
      .put('/auth/users/acl')
      .set(manager.auth)
      .send({ userId: overridden.user.id, features: ['auth.roles.list'] })
      .expect(200);
    const lists = [
      [],
      ['auth.roles.list', 'auth.users.list'],
      ['auth.roles', 'auth.rolesx', 'directory.tenants.view', 'directory.tenants'],
      ['*'],
      Array.from({ length: 50 }, (_, i) => `auth.roles.${'x'.repeat(i)}`),
      ['x'.repeat(128)],
    ];
    for (const caller of [roleCaller, admin, overridden]) {
      for (const features of lists) {
        const early = await check(caller.auth, { features });
        // An extra key makes the early answer step aside; the route's whitelist then drops the key.
        const routed = await check(caller.auth, { features, through: 'the route' });
        expect(early.status).toBe(200);
        expect(routed.status).toBe(200);
        expect(early.body).toEqual(routed.body);
        expect(early.headers['content-type']).toBe(routed.headers['content-type']);
        expect(early.headers.etag).toBe(routed.headers.etag);
        expect(early.headers['x-request-id']).toEqual(expect.any(String));
      }
    }
    expect((await check(roleCaller.auth, { features: lists[2] })).body).toEqual({
      ok: false,
      granted: ['auth.roles', 'directory.tenants.view'],
      userId: roleCaller.user.id,
    });
    expect((await check(overridden.auth, { features: ['auth.roles.list', 'auth.users.list'] })).body).toEqual({
      ok: false,
      granted: ['auth.roles.list'],
      userId: overridden.user.id,
    });
    expect((await check(admin.auth, { features: ['anything.at.all'] })).body).toMatchObject({ ok: true, granted: ['anything.at.all'] });
  });

  it('leaves every refusal to the route: its statuses and {ok: false, error} bodies', async () => {
    const caller = await f.loggedInUser(t, { features: ['auth.*'] });
    await check(caller.auth, { features: ['auth.roles.list'] }).expect(200);
    const refused: [object | string, number][] = [
      [{}, 400],
      [{ features: 'auth.roles.list' }, 400],
      [{ features: Array.from({ length: 51 }, (_, i) => `f.${i}`) }, 400],
      [{ features: [''] }, 400],
      [{ features: ['x'.repeat(129)] }, 400],
      [{ features: [5] }, 400],
      [{ features: ['auth\u0000roles'] }, 400],
      [{ features: ['auth.roles.list'], nested: { text: 'a\u0000b' } }, 400],
    ];
    for (const [body, status] of refused) {
      const res = await check(caller.auth, body as object);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.body).toMatchObject({ ok: false, error: expect.any(String) });
    }
    const malformed = await request(t.url).post('/auth/feature-check').set(caller.auth).type('json').send('{"features": [');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ ok: false, error: expect.any(String) });
    const tooLarge = await request(t.url)
      .post('/auth/feature-check')
      .set(caller.auth)
      .type('json')
      .send(JSON.stringify({ features: ['auth.roles.list'], padding: 'x'.repeat(1_100_000) }));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ ok: false, error: expect.any(String) });
    await request(t.url)
      .post('/auth/feature-check?x=%00')
      .set(caller.auth)
      .send({ features: ['auth.roles.list'] })
      .expect(400);
    // A form body is the route's too, and the same list gets the same answer.
    const form = await request(t.url).post('/auth/feature-check').set(caller.auth).type('form').send('features[]=auth.roles.list');
    expect(form.status).toBe(200);
    expect(form.body).toEqual({ ok: true, granted: ['auth.roles.list'], userId: caller.user.id });
    // Unauthenticated: 401 from the route's guard, and after a logout the token that was answered early is refused.
    await request(t.url).post('/auth/feature-check').send({ features: [] }).expect(401);
    await request(t.url).post('/auth/logout').set(caller.auth).expect(302);
    const ended = await check(caller.auth, { features: ['auth.roles.list'] });
    expect(ended.status).toBe(401);
    expect(ended.body).toMatchObject({ ok: false, error: 'session expired or revoked' });
  });

  it('follows a role ACL change and a tenant deactivation at once, after answering the caller early', async () => {
    const caller = await f.loggedInUser(t, { features: ['auth.roles.*'] });
    const manager = await f.loggedInUser(t, { isSuperAdmin: true }, caller.tenant);
    const operator = await f.loggedInUser(t, { isSuperAdmin: true });
    // Warm (the first request loads the session and the ACL), then answered early from the cache.
    for (let i = 0; i < 2; i++) {
      await check(caller.auth, { features: ['auth.roles.list'] }).expect(200, {
        ok: true,
        granted: ['auth.roles.list'],
        userId: caller.user.id,
      });
    }
    await request(t.url)
      .put('/auth/roles/acl')
      .set(manager.auth)
      .send({ roleId: caller.role.id, features: ['auth.users.*'], isSuperAdmin: false, organizations: null })
      .expect(200);
    await check(caller.auth, { features: ['auth.roles.list', 'auth.users.list'] }).expect(200, {
      ok: false,
      granted: ['auth.users.list'],
      userId: caller.user.id,
    });
    await request(t.url).put('/directory/tenants').set(operator.auth).send({ id: caller.tenant.id, isActive: false }).expect(200);
    const refused = await check(caller.auth, { features: ['auth.users.list'] });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ ok: false, error: expect.any(String) });
  });

  it('is in front of the real route: a request passes through it', async () => {
    const caller = await f.loggedInUser(t, { features: ['auth.*'] });
    // On the prototype: Nest makes the middleware's instance itself, and looks `answer` up at each request.
    const answer = jest.spyOn(FeatureCheckFastPath.prototype as unknown as { answer: (...args: unknown[]) => void }, 'answer');
    try {
      await check(caller.auth, { features: ['auth.roles.list'] }).expect(200);
      expect(answer).toHaveBeenCalledTimes(1);
      expect(answer.mock.calls[0][3]).toMatchObject({ userId: caller.user.id });
    } finally {
      answer.mockRestore();
    }
  });

  it('a failure inside it becomes the answer of the route, not a request left hanging', async () => {
    const caller = await f.loggedInUser(t, { features: ['auth.*'] });
    await check(caller.auth, { features: ['auth.roles.list'] }).expect(200); // warm: answered early
    // The early answer's call fails once; the route then runs the same service and answers.
    const checkFeatures = jest.spyOn(ProfileService.prototype, 'checkFeatures').mockImplementationOnce(() => {
      throw new Error('failure inside the early answer');
    });
    try {
      const res = await check(caller.auth, { features: ['auth.roles.list'] }).timeout(5000);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, granted: ['auth.roles.list'], userId: caller.user.id });
      expect(checkFeatures).toHaveBeenCalledTimes(2);
    } finally {
      checkFeatures.mockRestore();
    }
  });

  it('counts its answers under the route in the HTTP metrics', async () => {
    const caller = await f.loggedInUser(t, { features: ['auth.*'] });
    for (let i = 0; i < 3; i++) await check(caller.auth, { features: ['auth.roles.list'] }).expect(200);
    const metrics = await request(t.url).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    const count = sampleValue(parsePrometheusText(metrics.text), 'http_request_duration_seconds_count', {
      method: 'POST',
      route: '/auth/feature-check',
      status_code: '200',
    });
    expect(count).toBeGreaterThanOrEqual(3);
  });

  describe('in front of a stand-in route (which answers 418 with what it was left)', () => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      const fastPath = new FeatureCheckFastPath(
        t.app.get(AccessAuthenticator, { strict: false }),
        t.app.get(ProfileService, { strict: false }),
      );
      const app = express();
      app.post('/auth/feature-check', (req, res, next) => fastPath.use(req, res, next));
      // What the route's body guard gets: the body read once, or the first read's error again.
      app.post('/auth/feature-check', (req, res) => {
        readRequestBody(req, res, DEFAULT_BODY_LIMIT).then(
          () => res.status(418).json({ body: req.body ?? null }),
          (error: { status?: number }) => res.status(418).json({ bodyError: error.status }),
        );
      });
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const address = server.address();
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it('answers a warm caller and a cold one (session and ACL loaded first) with a body the route takes as it is', async () => {
      const caller = await f.loggedInUser(t, { features: ['auth.roles.*'] });
      // The first request of this login finds nothing cached and loads it.
      const cold = await request(url)
        .post('/auth/feature-check')
        .set(caller.auth)
        .send({ features: ['auth.roles.list'] });
      expect(cold.status).toBe(200);
      expect(cold.body).toEqual({ ok: true, granted: ['auth.roles.list'], userId: caller.user.id });
      const warm = await request(url)
        .post('/auth/feature-check')
        .set(caller.auth)
        .send({ features: ['auth.users.list'] });
      expect(warm.status).toBe(200);
      expect(warm.body).toEqual({ ok: false, granted: [], userId: caller.user.id });
    });

    it('steps aside, untouched or with the body read once, for everything else', async () => {
      const caller = await f.loggedInUser(t, { features: ['auth.roles.*'] });
      const to = (path = '/auth/feature-check') => request(url).post(path).set(caller.auth);
      expect((await request(url).post('/auth/feature-check').send({ features: [] })).status).toBe(418);
      expect(
        (await request(url).post('/auth/feature-check').set('Authorization', 'Bearer not.a.token').send({ features: [] })).status,
      ).toBe(418);
      for (const body of [{}, { features: [''] }, { features: ['x'.repeat(129)] }, { features: ['a'], extra: 1 }, { features: [null] }]) {
        const res = await to().send(body);
        expect(res.status).toBe(418);
        expect(res.body).toEqual({ body });
      }
      expect((await to('/auth/feature-check?x=%00').send({ features: ['auth.roles.list'] })).status).toBe(418);
      const malformed = await to().type('json').send('{"features": [');
      expect(malformed.status).toBe(418);
      expect(malformed.body).toEqual({ bodyError: 400 });
      const unsupported = await to().set('Content-Type', 'application/json; charset=latin1').send('{"features": []}');
      expect(unsupported.status).toBe(418);
      expect(unsupported.body).toEqual({ bodyError: 415 });
      await request(t.url).post('/auth/logout').set(caller.auth).expect(302);
      expect((await to().send({ features: ['auth.roles.list'] })).status).toBe(418);
    });
  });

  it('takes only bodies FeatureCheckDto accepts as they are (never looser than the route)', () => {
    const feature = fc.oneof(
      fc.string({ maxLength: 130 }),
      fc.string({ unit: 'grapheme', maxLength: 70 }),
      fc.constantFrom('', '\u0000', 'a\u0000', 'x'.repeat(128), 'x'.repeat(129), '😀'.repeat(64), '😀'.repeat(65)),
      fc.anything(),
    );
    const body = fc.oneof(
      fc.record({ features: fc.array(feature, { maxLength: 52 }) }),
      // Lists of valid entries around the size limit.
      fc.record({ features: fc.array(fc.string({ minLength: 1, maxLength: 128 }), { minLength: 48, maxLength: 52 }) }),
      fc.record({ features: fc.array(fc.string({ maxLength: 12 }), { maxLength: 52 }), other: fc.anything() }),
      fc.record({ features: fc.anything() }),
      fc.anything(),
    );
    fc.assert(
      fc.property(body, (candidate) => {
        const accepted = acceptedFeatures(candidate);
        if (accepted === null) return;
        const dto = plainToInstance(FeatureCheckDto, candidate);
        expect(validateSync(dto, { whitelist: true })).toEqual([]);
        expect(dto.features).toEqual(accepted);
      }),
      { numRuns: 2000 },
    );
    // And it does take the common case.
    expect(acceptedFeatures({ features: ['auth.roles.list', 'x'.repeat(128)] })).toEqual(['auth.roles.list', 'x'.repeat(128)]);
    expect(acceptedFeatures({ features: [] })).toEqual([]);
  });
});
