import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { Factories, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/** Issue #11 item 9: login and refresh redirects, and one password verification per login. */
describe('login hardening', () => {
  let t: PlatformTestApp;
  let f: Factories;
  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const loginForm = (fields: Record<string, string>) =>
    request(t.url).post('/auth/login').set('X-Forwarded-For', testIp()).type('form').send(fields);

  async function member() {
    const tenant = await f.tenant();
    const role = await f.role(tenant.id, { features: [] });
    return { tenant, role, user: await f.user(tenant, { roleIds: [role.id] }) };
  }

  describe('redirect', () => {
    // Browsers drop tabs and line breaks from URLs, so `/\t/evil` is followed as `//evil` (another host).
    // (NUL is refused for the whole request before the route runs.)
    const unsafe = [
      '/\t/evil.example',
      '/\n/evil.example',
      '/\r\n/evil.example',
      '/\u007f/evil.example',
      '/\\evil.example',
      '/a\\b',
      '/ok/\u0085',
      'http://localhost:3000/\t/x',
    ];

    it('login refuses control characters and backslashes anywhere (redirect "/"), keeps safe paths', async () => {
      const { user } = await member();
      for (const redirect of unsafe) {
        const res = await loginForm({ email: user.email, password: user.password, redirect }).expect(200);
        expect({ redirect, answered: res.body.redirect }).toEqual({ redirect, answered: '/' });
      }
      expect((await loginForm({ email: user.email, password: user.password, redirect: '/backend/roles?tab=1#x' })).body.redirect).toBe(
        '/backend/roles?tab=1#x',
      );
      expect((await loginForm({ email: user.email, password: user.password, redirect: '/' })).body.redirect).toBe('/');
    });

    it('GET /auth/session/refresh redirects to "/" for such targets', async () => {
      const { user } = await member();
      const res = await loginForm({ email: user.email, password: user.password }).expect(200);
      const cookie = ([] as string[])
        .concat(res.headers['set-cookie'])
        .find((c) => c.startsWith('session_token='))!
        .split(';')[0];
      for (const redirect of unsafe) {
        const refreshed = await request(t.url)
          .get(`/auth/session/refresh?redirect=${encodeURIComponent(redirect)}`)
          .set('Cookie', cookie)
          .expect(302);
        expect({ redirect, location: refreshed.headers.location }).toEqual({ redirect, location: '/' });
      }
      const ok = await request(t.url).get('/auth/session/refresh?redirect=/backend').set('Cookie', cookie).expect(302);
      expect(ok.headers.location).toBe('/backend');
    });
  });

  describe('one account, one password verification', () => {
    it('without tenantId the oldest account with a password is the one checked; tenantId picks another', async () => {
      const email = `shared-${Date.now()}@example.com`;
      const first = await member();
      const second = await member();
      const invitedFirst = await member();
      // An invited account (no password yet), created before the others, must not shadow them.
      await f.user(invitedFirst.tenant, { email, password: null, roleIds: [invitedFirst.role.id] });
      const older = await f.user(first.tenant, { email, password: 'older-password', roleIds: [first.role.id] });
      const newer = await f.user(second.tenant, { email, password: 'newer-password', roleIds: [second.role.id] });

      const ok = await loginForm({ email, password: 'older-password' }).expect(200);
      expect((jwt.decode(ok.body.token) as { sub: string }).sub).toBe(older.id);

      // Today's code tried every account's hash in turn, so this logged into the newer account.
      const other = await loginForm({ email, password: 'newer-password' }).expect(401);
      expect(other.body).toEqual({ ok: false, error: 'invalid credentials' });

      const chosen = await loginForm({ email, password: 'newer-password', tenantId: second.tenant.id }).expect(200);
      expect(jwt.decode(chosen.body.token) as { sub: string; tenantId: string }).toMatchObject({
        sub: newer.id,
        tenantId: second.tenant.id,
      });
      await loginForm({ email, password: 'older-password', tenantId: second.tenant.id }).expect(401);
    });

    it('an unknown email or an unknown tenant answers like a wrong password', async () => {
      const { user } = await member();
      const unknown = await loginForm({ email: 'nobody-at-all@example.com', password: 'whatever-1' }).expect(401);
      expect(unknown.body).toEqual({ ok: false, error: 'invalid credentials' });
      const foreignTenant = await f.tenant();
      const wrongTenant = await loginForm({ email: user.email, password: user.password, tenantId: foreignTenant.id }).expect(401);
      expect(wrongTenant.body).toEqual({ ok: false, error: 'invalid credentials' });
    });
  });
});
