import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { listen } from '@app/service-kit';
import { AccessCacheService } from '../src/core/auth/access-cache.service.js';
import { createPlatformHttpApp } from '../src/http-setup.js';
import { Factories, login, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * Issue #11 item 3: `isActive: false` stops logins into the tenant, refreshes, and every token it
 * issued, on every API instance (two instances on one database and one Redis, as two replicas).
 */
describe('deactivated tenants', () => {
  let a: PlatformTestApp;
  let b: NestExpressApplication;
  let bUrl: string;
  let f: Factories;
  let admin: { Authorization: string };
  beforeAll(async () => {
    a = await startPlatformApp();
    b = await createPlatformHttpApp(a.config);
    bUrl = await listen(b, 0, '127.0.0.1');
    f = Factories.of(a);
    admin = (await f.loggedInUser(a, { isSuperAdmin: true })).auth;
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const loginForm = (url: string, fields: Record<string, string>) =>
    request(url).post('/auth/login').set('X-Forwarded-For', testIp()).type('form').send(fields);
  const setActive = (id: string, isActive: boolean) =>
    request(a.url).put('/directory/tenants').set(admin).send({ id, isActive }).expect(200, { ok: true });

  it('ends every token, refresh token and session cookie of the tenant on both instances; logins are refused until re-activation', async () => {
    const tenant = await f.tenant();
    const role = await f.role(tenant.id, { features: [] });
    const user = await f.user(tenant, { roleIds: [role.id] });
    const bystanderTenant = await f.tenant();
    const bystanderRole = await f.role(bystanderTenant.id, { features: [] });
    const bystander = await f.user(bystanderTenant, { roleIds: [bystanderRole.id] });
    const bystanderToken = await login(a, bystander.email, bystander.password);

    const remembered = await loginForm(a.url, { email: user.email, password: user.password, remember: 'true' }).expect(200);
    const token: string = remembered.body.token;
    const refreshToken: string = remembered.body.refreshToken;
    const sessionCookie = ([] as string[])
      .concat(remembered.headers['set-cookie'])
      .find((c) => c.startsWith('session_token='))!
      .split(';')[0];
    // Both instances have the session cached.
    await request(a.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200);
    await request(bUrl).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200);

    await setActive(tenant.id, false);

    // The instance that did not handle the change learns it through Redis pub/sub (its cache held the session).
    await waitForStatus(() => request(bUrl).get('/auth/profile').set('Authorization', `Bearer ${token}`), 401);
    await request(a.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(401);
    const refreshed = await request(bUrl).post('/auth/session/refresh').set('X-Forwarded-For', testIp()).send({ refreshToken }).expect(401);
    expect(refreshed.body).toEqual({ ok: false, error: 'invalid or expired token' });
    await request(bUrl).get('/auth/session/refresh').set('Cookie', sessionCookie).expect(401);
    const refused = await loginForm(bUrl, { email: user.email, password: user.password }).expect(401);
    expect(refused.body).toEqual({ ok: false, error: 'invalid credentials' });
    await loginForm(bUrl, { email: user.email, password: user.password, tenantId: tenant.id }).expect(401);

    // Other tenants are untouched.
    await request(bUrl).get('/auth/profile').set('Authorization', `Bearer ${bystanderToken}`).expect(200);

    await setActive(tenant.id, true);
    const fresh = (await loginForm(bUrl, { email: user.email, password: user.password }).expect(200)).body.token;
    await request(a.url).get('/auth/profile').set('Authorization', `Bearer ${fresh}`).expect(200);
    // Re-activation does not bring back the tokens that were ended.
    await request(a.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(401);
    await request(a.url).post('/auth/session/refresh').set('X-Forwarded-For', testIp()).send({ refreshToken }).expect(401);
  });

  it('a session row of an inactive tenant (a login that raced the deactivation) is refused by the guard and by refresh', async () => {
    const tenant = await f.tenant();
    const role = await f.role(tenant.id, { features: [] });
    const user = await f.user(tenant, { roleIds: [role.id] });
    const res = await loginForm(a.url, { email: user.email, password: user.password, remember: 'true' }).expect(200);
    const { sid } = jwt.decode(res.body.token) as { sid: string };
    // Flip the flag behind the service's back: the session row stays, nothing is published.
    await a.app.get(DataSource).query('UPDATE tenants SET is_active = false WHERE id = $1', [tenant.id]);
    await a.app.get(AccessCacheService).invalidateSessions([sid]);
    await request(a.url).get('/auth/profile').set('Authorization', `Bearer ${res.body.token}`).expect(401);
    await request(a.url)
      .post('/auth/session/refresh')
      .set('X-Forwarded-For', testIp())
      .send({ refreshToken: res.body.refreshToken })
      .expect(401);
  });
});

async function waitForStatus(send: () => request.Test, status: number, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await send();
    if (res.status === status) return;
    if (Date.now() > deadline) throw new Error(`still ${res.status}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
