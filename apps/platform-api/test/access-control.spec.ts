import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Module, Param } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AccessCacheService } from '../src/core/auth/access-cache.service.js';
import { CurrentAuth, RequireFeatures } from '../src/core/auth/auth.decorators.js';
import type { AuthContext } from '../src/core/auth/auth-context.js';
import { grants, hasAllFeatures } from '../src/core/auth/feature-match.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/** Test-only routes guarded like real ones. */
@Controller('__guarded')
class GuardedController {
  @Get('roles') @RequireFeatures('auth.roles.list') roles() {
    return { ok: true };
  }
  @Get('both') @RequireFeatures('auth.roles.list', 'auth.users.list') both() {
    return { ok: true };
  }
  @Get('org/:id') org(@CurrentAuth() auth: AuthContext, @Param('id') id: string) {
    return { allowed: auth.canAccessOrganization(id) };
  }
}
@Module({ controllers: [GuardedController] })
class GuardedModule {}

describe('feature matching', () => {
  it('follows decisions.md', () => {
    expect(grants('*', 'anything.at.all')).toBe(true);
    expect(grants('auth.*', 'auth')).toBe(true);
    expect(grants('auth.*', 'auth.roles.list')).toBe(true);
    expect(grants('auth.*', 'authx.roles')).toBe(false);
    expect(grants('auth.roles.list', 'auth.roles.list')).toBe(true);
    expect(grants('auth.roles', 'auth.roles.list')).toBe(false);
    expect(hasAllFeatures(['a.*', 'b.x'], ['a.y', 'b.x'])).toBe(true);
    expect(hasAllFeatures(['a.*'], ['a.y', 'b.x'])).toBe(false);
  });
});

describe('the guard and ACL resolution', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  beforeAll(async () => {
    t = await startPlatformApp({ extraModules: [GuardedModule] });
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  it('403 {error} when a feature is missing, 200 when held; several features must all be held', async () => {
    const { auth } = await f.loggedInUser(t, { features: ['auth.roles.list'] });
    await request(t.url).get('/__guarded/roles').set(auth).expect(200);
    const denied = await request(t.url).get('/__guarded/both').set(auth).expect(403);
    expect(denied.body).toEqual({ error: expect.stringContaining('auth.users.list') });
  });

  it('wildcards grant what they cover; isSuperAdmin grants everything', async () => {
    const wildcard = await f.loggedInUser(t, { features: ['auth.*'] });
    await request(t.url).get('/__guarded/both').set(wildcard.auth).expect(200);
    const star = await f.loggedInUser(t, { features: ['*'] });
    await request(t.url).get('/__guarded/both').set(star.auth).expect(200);
    const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true });
    await request(t.url).get('/__guarded/both').set(superAdmin.auth).expect(200);
  });

  it('the union of role ACLs applies, and a user ACL replaces them', async () => {
    const tenant = await f.tenant();
    const r1 = await f.role(tenant.id, { features: ['auth.roles.list'] });
    const r2 = await f.role(tenant.id, { features: ['auth.users.list'] });
    const user = await f.user(tenant, { roleIds: [r1.id, r2.id] });
    const { login } = await import('./support/factories.js');
    const token = await login(t, user.email, user.password);
    const auth = { Authorization: `Bearer ${token}` };
    await request(t.url).get('/__guarded/both').set(auth).expect(200);

    await ds.query(`INSERT INTO user_acls (tenant_id, user_id, features) VALUES ($1, $2, '{auth.users.list}')`, [tenant.id, user.id]);
    await t.app.get(AccessCacheService).invalidateAcls();
    await request(t.url).get('/__guarded/roles').set(auth).expect(403);
    await request(t.url).get('/__guarded/both').set(auth).expect(403);

    await ds.query(`DELETE FROM user_acls WHERE user_id = $1`, [user.id]);
    await t.app.get(AccessCacheService).invalidateAcls();
    await request(t.url).get('/__guarded/both').set(auth).expect(200);
  });

  it('a cached ACL is not re-read from Postgres until invalidated', async () => {
    const { auth, role, tenant } = await f.loggedInUser(t, { features: ['auth.roles.list'] });
    await request(t.url).get('/__guarded/roles').set(auth).expect(200);
    await ds.query(`UPDATE role_acls SET features = '{}' WHERE role_id = $1 AND tenant_id = $2`, [role.id, tenant.id]);
    await request(t.url).get('/__guarded/roles').set(auth).expect(200); // still cached
    await t.app.get(AccessCacheService).invalidateAcls();
    await request(t.url).get('/__guarded/roles').set(auth).expect(403);
  });

  it('organization restrictions: null allows every organization, a list only those', async () => {
    const open = await f.loggedInUser(t, { features: [], organizations: null });
    expect((await request(t.url).get(`/__guarded/org/${open.tenant.organizationId}`).set(open.auth).expect(200)).body).toEqual({
      allowed: true,
    });
    const restricted = await f.loggedInUser(t, { features: [], organizations: ['11111111-1111-4111-8111-111111111111'] });
    expect((await request(t.url).get(`/__guarded/org/${restricted.tenant.organizationId}`).set(restricted.auth).expect(200)).body).toEqual({
      allowed: false,
    });
    expect((await request(t.url).get('/__guarded/org/11111111-1111-4111-8111-111111111111').set(restricted.auth).expect(200)).body).toEqual(
      { allowed: true },
    );
  });

  it('POST /auth/feature-check answers granted features; 400 {ok: false} when missing, too large or invalid', async () => {
    const { auth, user } = await f.loggedInUser(t, { features: ['auth.roles.*'] });
    const res = await request(t.url)
      .post('/auth/feature-check')
      .set(auth)
      .send({ features: ['auth.roles.list', 'auth.users.list'] })
      .expect(200);
    expect(res.body).toEqual({ ok: false, granted: ['auth.roles.list'], userId: user.id });
    const all = await request(t.url)
      .post('/auth/feature-check')
      .set(auth)
      .send({ features: ['auth.roles.manage'] })
      .expect(200);
    expect(all.body).toEqual({ ok: true, granted: ['auth.roles.manage'], userId: user.id });
    for (const body of [
      {},
      { features: 'auth.roles.list' },
      { features: Array.from({ length: 51 }, (_, i) => `f.${i}`) },
      { features: [''] },
      { features: ['x'.repeat(129)] },
      { features: [5] },
    ]) {
      const bad = await request(t.url).post('/auth/feature-check').set(auth).send(body).expect(400);
      expect(bad.body).toMatchObject({ ok: false, error: expect.any(String) });
    }
    await request(t.url).post('/auth/feature-check').send({ features: [] }).expect(401);
  });
});
