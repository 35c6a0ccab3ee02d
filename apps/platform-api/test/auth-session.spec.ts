import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories, login, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

function cookieValue(res: request.Response, name: string): string | undefined {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const match = cookies.find((c) => c.startsWith(`${name}=`));
  return match?.split(';')[0].slice(name.length + 1);
}

describe('login, sessions and tokens', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let tenant: { id: string; organizationId: string };
  let user: { id: string; email: string; password: string };
  let role: { id: string; name: string };
  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    tenant = await f.tenant();
    role = await f.role(tenant.id, { features: ['auth.roles.list'] }, { name: 'editor' });
    user = await f.user(tenant, { email: 'Jane@Example.com', roleIds: [role.id] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('logs in with a form, answers {ok, token, redirect} and sets httpOnly Lax cookies', async () => {
    const res = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: 'JANE@example.com', password: user.password })
      .expect(200);
    expect(res.body).toEqual({ ok: true, token: expect.any(String), redirect: null });
    const claims = jwt.verify(res.body.token, t.config.jwtSecret, { algorithms: ['HS256'] }) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: user.id, tenantId: tenant.id, orgId: tenant.organizationId, roles: ['editor'] });
    expect((claims.exp as number) - (claims.iat as number)).toBe(28800);
    const cookies = ([] as string[]).concat(res.headers['set-cookie']);
    expect(cookies.find((c) => c.startsWith('auth_token='))).toMatch(/HttpOnly/);
    expect(cookies.find((c) => c.startsWith('auth_token='))).toMatch(/SameSite=Lax/);
    expect(cookies.find((c) => c.startsWith('session_token='))).toMatch(/HttpOnly/);
    const [session] = await t.app
      .get(DataSource)
      .query('SELECT session_token_hash, refresh_token_hash, expires_at FROM sessions WHERE id = $1', [claims.sid]);
    expect(session.session_token_hash).not.toBe(cookieValue(res, 'session_token'));
    expect(session.refresh_token_hash).toBeNull();
    const hours = (new Date(session.expires_at).getTime() - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(7.9);
    expect(hours).toBeLessThanOrEqual(8);
  });

  it('with remember: a refreshToken in the body and a 30-day session', async () => {
    const res = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email, password: user.password, remember: 'true' })
      .expect(200);
    expect(res.body.refreshToken).toEqual(expect.any(String));
    const { sid } = jwt.decode(res.body.token) as { sid: string };
    const [session] = await t.app.get(DataSource).query('SELECT expires_at FROM sessions WHERE id = $1', [sid]);
    const days = (new Date(session.expires_at).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
  });

  it('echoes a safe redirect and drops an unsafe one', async () => {
    const send = (redirect: string) =>
      request(t.url)
        .post('/auth/login')
        .set('X-Forwarded-For', testIp())
        .type('form')
        .send({ email: user.email, password: user.password, redirect });
    expect((await send('/backend/roles')).body.redirect).toBe('/backend/roles');
    expect((await send('https://evil.example/x')).body.redirect).toBe('/');
    expect((await send('//evil.example')).body.redirect).toBe('/');
  });

  it('400 {ok: false, error} for an invalid payload, 401 for bad credentials', async () => {
    const invalid = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: 'not-an-email' })
      .expect(400);
    expect(invalid.body).toMatchObject({ ok: false, error: expect.stringMatching(/validation failed/) });
    const wrong = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email, password: 'nope-nope' })
      .expect(401);
    expect(wrong.body).toEqual({ ok: false, error: 'invalid credentials' });
    const unknown = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: 'ghost@example.com', password: 'whatever1' })
      .expect(401);
    expect(unknown.body).toEqual({ ok: false, error: 'invalid credentials' });
  });

  it('403 for a user without any role', async () => {
    const roleless = await f.user(tenant);
    const res = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: roleless.email, password: roleless.password })
      .expect(403);
    expect(res.body).toEqual({ ok: false, error: 'user lacks required role' });
  });

  it('429 with Retry-After after 5 attempts per IP and email within a minute', async () => {
    const ip = testIp();
    for (let i = 0; i < 5; i += 1) {
      await request(t.url)
        .post('/auth/login')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({ email: user.email, password: 'wrong-pass' })
        .expect(401);
    }
    const limited = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', ip)
      .type('form')
      .send({ email: user.email, password: user.password })
      .expect(429);
    expect(limited.body).toEqual({ error: expect.any(String) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another email from the same IP is still allowed (20 per IP).
    await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', ip)
      .type('form')
      .send({ email: 'other@example.com', password: 'wrong-pass' })
      .expect(401);
  });

  it('a protected route needs a token: 401 without, 200 with bearer or with the auth_token cookie', async () => {
    await request(t.url).get('/auth/profile').expect(401, { error: 'unauthorized' });
    await request(t.url).get('/auth/profile').set('Authorization', 'Bearer garbage').expect(401);
    const token = await login(t, user.email, user.password);
    const viaBearer = await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200);
    expect(viaBearer.body).toEqual({ email: 'jane@example.com', roles: ['editor'] });
    await request(t.url).get('/auth/profile').set('Cookie', `auth_token=${token}`).expect(200);
  });

  it('a token signed with another secret or already expired is 401', async () => {
    const token = await login(t, user.email, user.password);
    const claims = jwt.decode(token) as Record<string, unknown>;
    const { exp: _exp, iat: _iat, ...rest } = claims;
    const forged = jwt.sign(rest, 'other-secret', { algorithm: 'HS256', expiresIn: 60 });
    const valid = jwt.sign(rest, t.config.jwtSecret, { algorithm: 'HS256', expiresIn: 60 });
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${valid}`).expect(200);
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${forged}`).expect(401);
    const expired = jwt.sign(
      {
        sub: claims.sub,
        sid: claims.sid,
        tenantId: claims.tenantId,
        orgId: claims.orgId,
        roles: [],
        exp: Math.floor(Date.now() / 1000) - 10,
      },
      t.config.jwtSecret,
    );
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${expired}`).expect(401);
  });

  it('POST /auth/logout deletes the session (the JWT is then 401), clears cookies and redirects', async () => {
    const token = await login(t, user.email, user.password);
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200);
    const res = await request(t.url).post('/auth/logout').set('Authorization', `Bearer ${token}`).expect(302);
    expect(res.headers.location).toBe(`${t.config.appUrl}/login`);
    expect(([] as string[]).concat(res.headers['set-cookie']).join(';')).toMatch(/auth_token=;/);
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(401);
  });

  it('GET /auth/logout does the same', async () => {
    const token = await login(t, user.email, user.password);
    await request(t.url).get('/auth/logout').set('Authorization', `Bearer ${token}`).expect(302);
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(401);
  });

  it('a session deleted behind the cache stops working once another instance publishes the invalidation', async () => {
    const { AccessCacheService } = await import('../src/core/auth/access-cache.service.js');
    const { AuthCoreModule } = await import('../src/core/auth/auth-core.module.js');
    const { ModuleRef } = await import('@nestjs/core');
    const { waitFor } = await import('@app/service-kit/testing');
    // Another instance's cache: its own entries, the same Redis. (Not a second Nest app in this process:
    // passport keeps one global 'jwt' strategy, so closing a second app would break this one's auth.)
    const otherCache = await t.app.select(AuthCoreModule).get(ModuleRef, { strict: true }).create(AccessCacheService);
    expect(otherCache).not.toBe(t.app.get(AccessCacheService));
    const token = await login(t, user.email, user.password);
    const profile = () => request(t.url).get('/auth/profile').set('Authorization', `Bearer ${token}`);
    await profile().expect(200);
    const { sid } = jwt.decode(token) as { sid: string };
    await t.app.get(DataSource).query('DELETE FROM sessions WHERE id = $1', [sid]);
    await profile().expect(200); // still served from this instance's cache
    await otherCache.invalidateSessions([sid]); // reaches this instance only through Redis pub/sub
    await waitFor(async () => ((await profile()).status === 401 ? true : null), 5_000, 'the invalidation to reach this instance');
  });

  it('POST /auth/session/refresh: 200 {ok, accessToken, expiresIn}, 400 missing, 401 invalid', async () => {
    const res = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email, password: user.password, remember: '1' })
      .expect(200);
    const refreshed = await request(t.url).post('/auth/session/refresh').send({ refreshToken: res.body.refreshToken }).expect(200);
    expect(refreshed.body).toEqual({ ok: true, accessToken: expect.any(String), expiresIn: 28800 });
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${refreshed.body.accessToken}`).expect(200);
    const missing = await request(t.url).post('/auth/session/refresh').send({}).expect(400);
    expect(missing.body.ok).toBe(false);
    const invalid = await request(t.url).post('/auth/session/refresh').send({ refreshToken: 'nope' }).expect(401);
    expect(invalid.body).toEqual({ ok: false, error: 'invalid or expired token' });
  });

  it('POST /auth/session/refresh is limited to 15 per IP and token per minute', async () => {
    const ip = testIp();
    for (let i = 0; i < 15; i += 1) {
      await request(t.url).post('/auth/session/refresh').set('X-Forwarded-For', ip).send({ refreshToken: 'same-token' }).expect(401);
    }
    const limited = await request(t.url)
      .post('/auth/session/refresh')
      .set('X-Forwarded-For', ip)
      .send({ refreshToken: 'same-token' })
      .expect(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });

  it('GET /auth/session/refresh exchanges the session_token cookie and redirects only to safe targets', async () => {
    const loginRes = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email, password: user.password })
      .expect(200);
    const sessionToken = cookieValue(loginRes, 'session_token');
    const ok = await request(t.url)
      .get('/auth/session/refresh?redirect=/backend')
      .set('Cookie', `session_token=${sessionToken}`)
      .expect(302);
    expect(ok.headers.location).toBe('/backend');
    const fresh = cookieValue(ok, 'auth_token');
    await request(t.url).get('/auth/profile').set('Cookie', `auth_token=${fresh}`).expect(200);
    const allowed = await request(t.url)
      .get(`/auth/session/refresh?redirect=${encodeURIComponent('http://localhost:3000/x?y=1')}`)
      .set('Cookie', `session_token=${sessionToken}`)
      .expect(302);
    expect(allowed.headers.location).toBe('http://localhost:3000/x?y=1');
    const evil = await request(t.url)
      .get(`/auth/session/refresh?redirect=${encodeURIComponent('https://evil.example/')}`)
      .set('Cookie', `session_token=${sessionToken}`)
      .expect(302);
    expect(evil.headers.location).toBe('/');
    await request(t.url).get('/auth/session/refresh').expect(401);
    await request(t.url).get('/auth/session/refresh').set('Cookie', 'session_token=forged').expect(401);
  });

  it('GET /auth/profile is 404 for a deleted user whose session still exists', async () => {
    const ghost = await f.user(tenant, { roleIds: [role.id] });
    const token = await login(t, ghost.email, ghost.password);
    await t.app.get(DataSource).query('UPDATE users SET deleted_at = now() WHERE id = $1', [ghost.id]);
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(404, { error: 'user not found' });
  });

  it('PUT /auth/profile changes email and password; 400 for an invalid payload or a taken email', async () => {
    const me = await f.user(tenant, { roleIds: [role.id] });
    const other = await f.user(tenant, { roleIds: [role.id] });
    const token = await login(t, me.email, me.password);
    const auth = { Authorization: `Bearer ${token}` };
    await request(t.url).put('/auth/profile').set(auth).send({}).expect(400);
    await request(t.url).put('/auth/profile').set(auth).send({ email: 'nope' }).expect(400);
    await request(t.url).put('/auth/profile').set(auth).send({ password: 'short' }).expect(400);
    await request(t.url)
      .put('/auth/profile')
      .set(auth)
      .send({ email: other.email, currentPassword: me.password })
      .expect(400, { error: 'email already in use' });
    const res = await request(t.url)
      .put('/auth/profile')
      .set(auth)
      .send({ email: 'New.Me@example.com', password: 'brand-new-pass', currentPassword: me.password })
      .expect(200);
    expect(res.body).toEqual({ ok: true, email: 'new.me@example.com' });
    await login(t, 'new.me@example.com', 'brand-new-pass');
    await request(t.url).put('/auth/profile').send({ email: 'x@example.com' }).expect(401);
  });

  it('GET/POST /auth/locale', async () => {
    const token = await login(t, user.email, user.password);
    const auth = { Authorization: `Bearer ${token}` };
    const initial = await request(t.url).get('/auth/locale').set(auth).expect(200);
    expect(initial.body).toBe('en');
    const set = await request(t.url).post('/auth/locale').set(auth).send({ locale: 'de' }).expect(201);
    expect(set.body).toBe('de');
    expect((await request(t.url).get('/auth/locale').set(auth).expect(200)).body).toBe('de');
    await request(t.url).post('/auth/locale').set(auth).send({ locale: '../../etc' }).expect(400);
    await request(t.url).get('/auth/locale').expect(401);
  });
});
