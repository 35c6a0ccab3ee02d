import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Factories, login } from './support/factories.js';
import { processEnv, startApiProcess, type ApiProcess } from './support/app-process.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * Two API instances on one database and one Redis, as two replicas behind a load balancer: A in this
 * process, B the compiled API (`node dist/main.js`) in its own, so nothing in memory is shared.
 */
describe('caches across instances', () => {
  let a: PlatformTestApp;
  let b: ApiProcess;
  let bUrl: string;
  let f: Factories;
  beforeAll(async () => {
    a = await startPlatformApp();
    b = await startApiProcess('B', processEnv(a.config));
    await b.ready;
    bUrl = b.url;
    f = Factories.of(a);
  }, 30_000);
  afterAll(async () => {
    await b?.kill('SIGTERM');
    await a?.close();
  });

  it('a logout on instance A revokes the token on instance B, which had it cached', async () => {
    const tenant = await f.tenant();
    const role = await f.role(tenant.id, { features: [] });
    const user = await f.user(tenant, { roleIds: [role.id] });
    const token = await login(a, user.email, user.password);
    await request(bUrl).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200);
    await request(a.url).post('/auth/logout').set('Authorization', `Bearer ${token}`).expect(302);
    await waitForStatus(() => request(bUrl).get('/auth/profile').set('Authorization', `Bearer ${token}`), 401);
  });

  it('a role ACL change through instance A takes effect on instance B', async () => {
    const admin = await f.loggedInUser(a, { isSuperAdmin: true });
    const tenant = await f.tenant();
    const role = await f.role(tenant.id, { features: ['auth.roles.list'] });
    const user = await f.user(tenant, { roleIds: [role.id] });
    const token = await login(a, user.email, user.password);
    const check = () =>
      request(bUrl)
        .post('/auth/feature-check')
        .set('Authorization', `Bearer ${token}`)
        .send({ features: ['auth.roles.list'] });
    expect((await check().expect(200)).body.ok).toBe(true);
    await request(a.url)
      .put('/auth/roles/acl')
      .set(admin.auth)
      .send({ roleId: role.id, tenantId: tenant.id, features: [], isSuperAdmin: false, organizations: null })
      .expect(200);
    const deadline = Date.now() + 5000;
    for (;;) {
      const res = await check().expect(200);
      if (res.body.ok === false) break;
      if (Date.now() > deadline) throw new Error('instance B kept the stale ACL');
      await new Promise((r) => setTimeout(r, 20));
    }
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
