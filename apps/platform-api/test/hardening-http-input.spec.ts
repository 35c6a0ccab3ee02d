import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { clientIpBucket, parseTrustProxy } from '@app/service-kit';
import { Factories, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/** `{"a":{"a":...}}` nested `depth` levels. */
function deepJson(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('input the platform refuses before it reaches a route (NUL, nesting, malformed JSON)', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let admin: Awaited<ReturnType<Factories['loggedInUser']>>;
  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    admin = await f.loggedInUser(t, { features: ['auth.*', 'directory.*'] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a NUL character in a search, a role name or a sidebar setting is a 400 with the field, never a 500', async () => {
    const search = await request(t.url).get('/auth/roles?search=a%00b').set(admin.auth).expect(400);
    expect(search.body).toEqual({
      error: 'validation failed: search must not contain NUL characters',
      details: [{ field: 'search', code: 'hasNoNulCharacter', message: 'search must not contain NUL characters' }],
    });
    const users = await request(t.url).get('/auth/users?search=%00').set(admin.auth).expect(400);
    expect(users.body.details).toEqual([expect.objectContaining({ field: 'search', code: 'hasNoNulCharacter' })]);
    const role = await request(t.url).post('/auth/roles').set(admin.auth).send({ name: 'bad\u0000name' }).expect(400);
    expect(role.body.details).toEqual([expect.objectContaining({ field: 'name', code: 'hasNoNulCharacter' })]);
    const sidebar = await request(t.url)
      .put('/auth/sidebar/preferences')
      .set(admin.auth)
      .send({ settings: { groupOrder: ['a\u0000'] } })
      .expect(400);
    expect(sidebar.body.details).toEqual([expect.objectContaining({ field: 'settings.groupOrder[0]', code: 'hasNoNulCharacter' })]);
    const tenants = await request(t.url).get('/directory/organizations?search=x%00').set(admin.auth).expect(400);
    expect(tenants.body.details).toEqual([expect.objectContaining({ field: 'search', code: 'hasNoNulCharacter' })]);
  });

  it('JSON nested 2,000 levels deep is a 400 in the documented shape (no stack overflow); 65 levels are refused, 64 pass the check', async () => {
    const deep = await request(t.url)
      .post('/auth/roles')
      .set(admin.auth)
      .set('Content-Type', 'application/json')
      .send(deepJson(2000))
      .expect(400);
    expect(deep.body).toEqual({
      error: expect.stringMatching(/^validation failed: .* is nested deeper than 64 levels$/),
      details: [expect.objectContaining({ code: 'maxDepth' })],
    });
    const atLimit = await request(t.url).post('/auth/roles').set(admin.auth).set('Content-Type', 'application/json').send(deepJson(65));
    expect(atLimit.body.details?.[0]?.code).toBe('maxDepth');
    const below = await request(t.url).post('/auth/roles').set(admin.auth).set('Content-Type', 'application/json').send(deepJson(64));
    expect(below.status).toBe(400);
    expect(below.body.details?.[0]?.code).not.toBe('maxDepth');
  });

  it('a malformed JSON body on the {ok: false} routes answers {ok: false, error}', async () => {
    for (const path of ['/auth/login', '/auth/session/refresh', '/auth/reset/confirm']) {
      const res = await request(t.url)
        .post(path)
        .set('X-Forwarded-For', testIp())
        .set('Content-Type', 'application/json')
        .send('{"email":');
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 400,
        body: { ok: false, error: 'malformed JSON body' },
      });
    }
    const check = await request(t.url)
      .post('/auth/feature-check')
      .set(admin.auth)
      .set('Content-Type', 'application/json')
      .send('{"features":');
    expect(check.status).toBe(400);
    expect(check.body).toEqual({ ok: false, error: 'malformed JSON body' });
  });

  it('an unauthenticated feature-check with a malformed body is 401 (authentication comes before the body)', async () => {
    const res = await request(t.url).post('/auth/feature-check').set('Content-Type', 'application/json').send('{"features":');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ ok: false, error: expect.any(String) });
  });

  it('a malformed body elsewhere keeps the plain {error} shape', async () => {
    const res = await request(t.url)
      .post('/auth/roles')
      .set(admin.auth)
      .set('Content-Type', 'application/json')
      .send('{"name":')
      .expect(400);
    expect(res.body).toEqual({ error: 'malformed JSON body' });
  });
});

describe('client address: X-Forwarded-For only from configured proxies (TRUST_PROXY)', () => {
  it('parses a hop count or a list of addresses and CIDR ranges, and refuses anything else', () => {
    expect(parseTrustProxy(undefined)).toBe(false);
    expect(parseTrustProxy('')).toBe(false);
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.0/8, 192.168.1.7,fd00::/8')).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
    expect(() => parseTrustProxy('loopback')).toThrow(/TRUST_PROXY/);
    expect(() => parseTrustProxy('10.0.0.0/33')).toThrow(/TRUST_PROXY/);
    expect(() => parseTrustProxy('99')).toThrow(/TRUST_PROXY/);
  });

  it('buckets IPv6 clients by /64 and IPv4 (also IPv4-mapped) by address', () => {
    expect(clientIpBucket('203.0.113.9')).toBe('203.0.113.9');
    expect(clientIpBucket('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientIpBucket('2001:db8:1:2::a')).toBe('2001:db8:1:2::/64');
    expect(clientIpBucket('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientIpBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientIpBucket('2001:db8:1:3::a')).not.toBe(clientIpBucket('2001:db8:1:2::a'));
  });

  /** Six failed logins for one email: the sixth is 429 when they count as one client (5/60 s per IP and email). */
  async function sixthFailedLogin(t: PlatformTestApp, forwardedFor: (i: number) => string): Promise<number> {
    let status = 0;
    for (let i = 0; i < 6; i += 1) {
      const res = await request(t.url)
        .post('/auth/login')
        .set('X-Forwarded-For', forwardedFor(i))
        .type('form')
        .send({ email: 'nobody@example.com', password: 'wrong-password' });
      status = res.status;
    }
    return status;
  }

  it('by default (no TRUST_PROXY) X-Forwarded-For is ignored: a client cannot pick a fresh IP per request', async () => {
    const t = await startPlatformApp({ env: { TRUST_PROXY: '' } });
    try {
      expect(t.config.trustProxy).toBe(false);
      expect(await sixthFailedLogin(t, (i) => `198.51.100.${i + 1}`)).toBe(429);
    } finally {
      await t.close();
    }
  });

  it('with a trusted proxy the forwarded address counts, and addresses of one IPv6 /64 share a bucket', async () => {
    const t = await startPlatformApp({ env: { TRUST_PROXY: '127.0.0.1/32,::1' } });
    try {
      expect(await sixthFailedLogin(t, (i) => `198.51.100.${i + 1}`)).toBe(401);
      expect(await sixthFailedLogin(t, (i) => `2001:db8:77:1::${(i + 1).toString(16)}`)).toBe(429);
    } finally {
      await t.close();
    }
  });

  it('a hop count trusts that many proxies: the address before them is the client', async () => {
    const t = await startPlatformApp({ env: { TRUST_PROXY: '1' } });
    try {
      // One trusted hop (the test client): the right-most forwarded address is the client...
      expect(await sixthFailedLogin(t, (i) => `203.0.113.${i + 1}`)).toBe(401);
      // ...and whatever a client claims before it is ignored.
      expect(await sixthFailedLogin(t, (i) => `10.9.9.${i + 1}, 203.0.113.50`)).toBe(429);
    } finally {
      await t.close();
    }
  });
});

describe('paging parameters are bounded on every list (400, never 500)', () => {
  let t: PlatformTestApp;
  let superAdmin: Awaited<ReturnType<Factories['loggedInUser']>>;
  beforeAll(async () => {
    t = await startPlatformApp();
    superAdmin = await Factories.of(t).loggedInUser(t, { isSuperAdmin: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('every GET operation with page/pageSize/limit/offset in /openapi.json answers 400 for absurd values', async () => {
    const spec = (await request(t.url).get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const checked: string[] = [];
    for (const [route, operations] of Object.entries(spec.paths)) {
      const get = operations.get;
      if (!get || route.includes('{')) continue;
      const names = (get.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      for (const name of names.filter((n) => ['page', 'pageSize', 'limit', 'offset'].includes(n))) {
        for (const value of ['1e18', '99999999999999999999', '-1', '1.5', 'abc']) {
          const res = await request(t.url).get(`${route}?${name}=${value}`).set(superAdmin.auth);
          // The export's limit is "capped at 1000" (platform-api.md): a huge one is clamped, not refused.
          const clamped = route.endsWith('/export') && name === 'limit' && Number(value) > 0 && Number.isInteger(Number(value));
          const outcome = { route, name, value, status: res.status, hasError: typeof (res.body as { error?: unknown }).error === 'string' };
          expect(outcome).toEqual({ route, name, value, status: clamped ? 200 : 400, hasError: !clamped });
        }
        checked.push(`${route} ${name}`);
      }
    }
    // The lists this covers today; a new list is picked up from the route table without editing this test.
    expect(checked).toEqual(
      expect.arrayContaining([
        '/auth/roles page',
        '/auth/users pageSize',
        '/directory/tenants page',
        '/directory/organizations page',
        '/notifications page',
      ]),
    );
  });
});
