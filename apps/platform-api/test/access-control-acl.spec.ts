import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { systemScope } from '../src/core/scope/tenant-scope.js';
import { RoleAclRepository } from '../src/modules/roles/role-acl.repository.js';
import { UserAclRepository } from '../src/modules/users/user-acl.repository.js';
import { Factories, login } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
const UNKNOWN_ID = '5b6c9a8e-1f2d-4c3b-9a7e-0d1c2b3a4f5e';
/** A tenant administrator: may manage ACLs and roles, nothing else. */
const ACL_ADMIN = ['auth.acl.manage', 'auth.roles.*'];
const NO_ACL = { isSuperAdmin: false, features: [], organizations: null };

describe('role and user ACLs', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  const getRoleAcl = (auth: Auth, query: object) => request(t.url).get('/auth/roles/acl').set(auth).query(query);
  const putRoleAcl = (auth: Auth, body: object) => request(t.url).put('/auth/roles/acl').set(auth).send(body);
  const getUserAcl = (auth: Auth, query: object) => request(t.url).get('/auth/users/acl').set(auth).query(query);
  const putUserAcl = (auth: Auth, body: object) => request(t.url).put('/auth/users/acl').set(auth).send(body);
  const roleAclRow = async (roleId: string, tenantId: string) =>
    (
      await ds.query('SELECT is_super_admin, features, organizations FROM role_acls WHERE role_id = $1 AND tenant_id = $2', [
        roleId,
        tenantId,
      ])
    )[0];
  const userAclRow = async (userId: string) =>
    (await ds.query('SELECT tenant_id, is_super_admin, features, organizations FROM user_acls WHERE user_id = $1', [userId]))[0];
  const addOrganization = async (tenantId: string) =>
    (
      await ds.query(`INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'Second', 'org-' || gen_random_uuid()) RETURNING id`, [
        tenantId,
      ])
    )[0].id as string;
  /** A user holding the given roles in the tenant, logged in. */
  const member = async (tenant: { id: string; organizationId: string }, roleIds: string[]) => {
    const user = await f.user(tenant, { roleIds });
    return { ...user, auth: { Authorization: `Bearer ${await login(t, user.email, user.password)}` } };
  };

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  it('401 without a token and 403 without auth.acl.manage on every route', async () => {
    const routes = (r: request.Agent | ReturnType<typeof request>) => [
      r.get(`/auth/roles/acl?roleId=${UNKNOWN_ID}`),
      r.put('/auth/roles/acl').send({ roleId: UNKNOWN_ID, features: [] }),
      r.get(`/auth/users/acl?userId=${UNKNOWN_ID}`),
      r.put('/auth/users/acl').send({ userId: UNKNOWN_ID, features: [] }),
    ];
    for (const r of routes(request(t.url))) expect((await r.expect(401)).body).toEqual({ error: expect.any(String) });
    const rolesOnly = await f.loggedInUser(t, { features: ['auth.roles.*', 'auth.users.*'] });
    for (const r of routes(request(t.url))) {
      const res = await r.set(rolesOnly.auth).expect(403);
      expect(res.body).toEqual({ error: expect.stringContaining('auth.acl.manage') });
    }
  });

  describe('GET/PUT /auth/roles/acl', () => {
    it('a role without an ACL reads as empty; PUT replaces the whole ACL (200 {ok, sanitized: false})', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const role = await f.role(null, {}, { aclTenantId: undefined });
      const own = await f.role(admin.tenant.id, {});
      await ds.query('DELETE FROM role_acls WHERE role_id = $1', [own.id]);
      expect((await getRoleAcl(admin.auth, { roleId: own.id }).expect(200)).body).toEqual(NO_ACL);
      expect((await getRoleAcl(admin.auth, { roleId: role.id }).expect(200)).body).toEqual(NO_ACL);

      const second = await addOrganization(admin.tenant.id);
      const res = await putRoleAcl(admin.auth, {
        roleId: own.id,
        features: ['auth.roles.list', 'auth.roles.manage', 'auth.roles.list'],
        isSuperAdmin: false,
        organizations: [admin.tenant.organizationId, second],
      }).expect(200);
      expect(res.body).toEqual({ ok: true, sanitized: false });
      expect(await roleAclRow(own.id, admin.tenant.id)).toEqual({
        is_super_admin: false,
        features: ['auth.roles.list', 'auth.roles.manage'],
        organizations: [admin.tenant.organizationId, second],
      });
      expect((await getRoleAcl(admin.auth, { roleId: own.id, tenantId: admin.tenant.id }).expect(200)).body).toEqual({
        isSuperAdmin: false,
        features: ['auth.roles.list', 'auth.roles.manage'],
        organizations: [admin.tenant.organizationId, second],
      });

      // Replaces: what is not sent is gone (organizations omitted = no restriction).
      await putRoleAcl(admin.auth, { roleId: own.id, features: ['auth.roles.manage'], isSuperAdmin: false }).expect(200);
      expect(await roleAclRow(own.id, admin.tenant.id)).toEqual({
        is_super_admin: false,
        features: ['auth.roles.manage'],
        organizations: null,
      });
      await putRoleAcl(admin.auth, { roleId: own.id, features: [], isSuperAdmin: false, organizations: null }).expect(200);
      expect((await getRoleAcl(admin.auth, { roleId: own.id }).expect(200)).body).toEqual(NO_ACL);
    });

    it('a global role has one ACL per tenant: a tenant administrator sets the one of its tenant only', async () => {
      const a = await f.loggedInUser(t, { features: ACL_ADMIN });
      const b = await f.loggedInUser(t, { features: ACL_ADMIN });
      const global = await f.role(null, { features: ['auth.roles.list'] }, { aclTenantId: b.tenant.id });
      await putRoleAcl(a.auth, { roleId: global.id, features: ['auth.roles.manage'], isSuperAdmin: false }).expect(200);
      expect((await roleAclRow(global.id, a.tenant.id)).features).toEqual(['auth.roles.manage']);
      expect((await roleAclRow(global.id, b.tenant.id)).features).toEqual(['auth.roles.list']);
      expect((await getRoleAcl(b.auth, { roleId: global.id }).expect(200)).body.features).toEqual(['auth.roles.list']);
    });

    it('tenant isolation: another tenant’s role, or naming another tenant, is 404; unknown role 404', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const other = await f.tenant();
      const foreign = await f.role(other.id, { features: ['auth.roles.list'] });
      const own = await f.role(admin.tenant.id, {});
      for (const query of [
        { roleId: foreign.id },
        { roleId: UNKNOWN_ID },
        { roleId: own.id, tenantId: other.id },
        { roleId: foreign.id, tenantId: other.id },
      ]) {
        expect((await getRoleAcl(admin.auth, query).expect(404)).body).toEqual({ error: expect.any(String) });
      }
      for (const body of [
        { roleId: foreign.id, features: [] },
        { roleId: UNKNOWN_ID, features: [] },
        { roleId: foreign.id, features: [], tenantId: other.id },
      ]) {
        expect((await putRoleAcl(admin.auth, body).expect(404)).body).toEqual({ error: expect.any(String) });
      }
      expect((await getRoleAcl(admin.auth, { roleId: foreign.id }).expect(404)).body).toEqual({ error: 'role not found' });
      expect(await roleAclRow(foreign.id, other.id)).toMatchObject({ features: ['auth.roles.list'] });
    });

    it('400 {error} for an invalid role id or payload, and for organizations outside the tenant', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const role = await f.role(admin.tenant.id, {});
      for (const query of [{}, { roleId: 'nope' }, { roleId: role.id, tenantId: 'nope' }]) {
        expect((await getRoleAcl(admin.auth, query).expect(400)).body).toMatchObject({ error: expect.any(String) });
      }
      for (const body of [
        {},
        { roleId: 'nope', features: [] },
        { roleId: role.id },
        { roleId: role.id, features: 'auth.roles.list' },
        { roleId: role.id, features: [''] },
        { roleId: role.id, features: [7] },
        { roleId: role.id, features: ['x'.repeat(129)] },
        { roleId: role.id, features: Array.from({ length: 501 }, (_, i) => `f.${i}`) },
        { roleId: role.id, features: [], isSuperAdmin: 'yes' },
        { roleId: role.id, features: [], organizations: ['nope'] },
        { roleId: role.id, features: [], organizations: 'all' },
      ]) {
        expect((await putRoleAcl(admin.auth, body).expect(400)).body).toMatchObject({ error: expect.any(String) });
      }
      const foreignOrg = (await f.tenant()).organizationId;
      const res = await putRoleAcl(admin.auth, { roleId: role.id, features: [], organizations: [foreignOrg] }).expect(400);
      expect(res.body).toEqual({ error: expect.stringContaining(foreignOrg) });
      expect(await roleAclRow(role.id, admin.tenant.id)).toMatchObject({ features: [], organizations: null });
      // 128 characters and 500 features are fine for a super administrator.
      const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true }, admin.tenant);
      const many = Array.from({ length: 499 }, (_, i) => `f.${i}`).concat('x'.repeat(128));
      await putRoleAcl(superAdmin.auth, { roleId: role.id, features: many }).expect(200);
      expect((await roleAclRow(role.id, admin.tenant.id)).features).toHaveLength(500);
    });

    it('grant boundary: `*`, isSuperAdmin or a feature the caller lacks is 403 and changes nothing', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const role = await f.role(admin.tenant.id, { features: ['auth.roles.list'] });
      for (const body of [
        { features: ['*'], isSuperAdmin: false },
        { features: [], isSuperAdmin: true },
        { features: ['auth.roles.list', 'auth.users.list'], isSuperAdmin: false },
        { features: ['auth.*'], isSuperAdmin: false },
      ]) {
        const res = await putRoleAcl(admin.auth, { roleId: role.id, ...body, organizations: null }).expect(403);
        expect(res.body).toEqual({ error: expect.any(String) });
      }
      expect(await roleAclRow(role.id, admin.tenant.id)).toEqual({
        is_super_admin: false,
        features: ['auth.roles.list'],
        organizations: null,
      });

      // A wildcard the caller holds, and features it covers, can be granted.
      const ok = await putRoleAcl(admin.auth, {
        roleId: role.id,
        features: ['auth.roles.*', 'auth.roles.manage', 'auth.acl.manage'],
        isSuperAdmin: false,
        organizations: null,
      }).expect(200);
      expect(ok.body).toEqual({ ok: true, sanitized: false });
      expect((await roleAclRow(role.id, admin.tenant.id)).features).toEqual(['auth.roles.*', 'auth.roles.manage', 'auth.acl.manage']);
    });

    it('grant boundary: an organization-restricted caller cannot widen or leave the restriction', async () => {
      const tenant = await f.tenant();
      const second = await addOrganization(tenant.id);
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN, organizations: [tenant.organizationId] }, tenant);
      const role = await f.role(tenant.id, {});
      await putRoleAcl(admin.auth, { roleId: role.id, features: ['auth.roles.list'], organizations: null }).expect(403);
      await putRoleAcl(admin.auth, { roleId: role.id, features: ['auth.roles.list'], organizations: [second] }).expect(403);
      await putRoleAcl(admin.auth, { roleId: role.id, features: ['auth.roles.list'], organizations: [tenant.organizationId] }).expect(200);
      expect(await roleAclRow(role.id, tenant.id)).toMatchObject({ organizations: [tenant.organizationId] });
    });

    it('a super-administrator role ACL cannot be read or changed by a non super administrator (403)', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const superRole = await f.role(admin.tenant.id, { isSuperAdmin: true });
      expect((await getRoleAcl(admin.auth, { roleId: superRole.id }).expect(403)).body).toEqual({ error: expect.any(String) });
      await putRoleAcl(admin.auth, { roleId: superRole.id, features: [], isSuperAdmin: false }).expect(403);
      expect(await roleAclRow(superRole.id, admin.tenant.id)).toMatchObject({ is_super_admin: true });
    });

    it('super administrators: any tenant (tenantId), isSuperAdmin and `*`; unknown tenant 404', async () => {
      const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true });
      const other = await f.tenant();
      const foreign = await f.role(other.id, { features: ['auth.roles.list'] });
      await putRoleAcl(superAdmin.auth, {
        roleId: foreign.id,
        features: ['*'],
        isSuperAdmin: true,
        organizations: null,
        tenantId: other.id,
      }).expect(200);
      expect(await roleAclRow(foreign.id, other.id)).toEqual({ is_super_admin: true, features: ['*'], organizations: null });
      expect((await getRoleAcl(superAdmin.auth, { roleId: foreign.id, tenantId: other.id }).expect(200)).body).toEqual({
        isSuperAdmin: true,
        features: ['*'],
        organizations: null,
      });
      // A tenant role has no ACL in another tenant's scope; the caller's tenant is the default scope.
      await getRoleAcl(superAdmin.auth, { roleId: foreign.id }).expect(404);
      expect((await getRoleAcl(superAdmin.auth, { roleId: foreign.id, tenantId: UNKNOWN_ID }).expect(404)).body).toEqual({
        error: 'tenant not found',
      });
      await putRoleAcl(superAdmin.auth, { roleId: foreign.id, features: [], tenantId: UNKNOWN_ID }).expect(404);
    });

    it('takes effect on the holders’ next request (caches invalidated across the change)', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const role = await f.role(admin.tenant.id, { features: ['auth.roles.list'] });
      const holder = await member(admin.tenant, [role.id]);
      await request(t.url).get('/auth/roles').set(holder.auth).expect(200); // resolved and cached
      await putRoleAcl(admin.auth, { roleId: role.id, features: ['auth.acl.manage'], isSuperAdmin: false }).expect(200);
      await request(t.url).get('/auth/roles').set(holder.auth).expect(403);
      await request(t.url).get('/auth/users/acl').query({ userId: holder.id }).set(holder.auth).expect(200);
      await putRoleAcl(admin.auth, { roleId: role.id, features: ['auth.roles.list'], isSuperAdmin: false }).expect(200);
      await request(t.url).get('/auth/roles').set(holder.auth).expect(200);
      await request(t.url).get('/auth/users/acl').query({ userId: holder.id }).set(holder.auth).expect(403);
    });
  });

  describe('GET/PUT /auth/users/acl', () => {
    it('a user without a custom ACL reads as empty with hasCustomAcl false; with one, as stored', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const role = await f.role(admin.tenant.id, { features: ['auth.roles.list'] });
      const user = await f.user(admin.tenant, { roleIds: [role.id] });
      expect((await getUserAcl(admin.auth, { userId: user.id }).expect(200)).body).toEqual({ ...NO_ACL, hasCustomAcl: false });
      const res = await putUserAcl(admin.auth, {
        userId: user.id,
        features: ['auth.roles.manage'],
        organizations: [admin.tenant.organizationId],
      }).expect(200);
      expect(res.body).toEqual({ ok: true, sanitized: false });
      expect((await getUserAcl(admin.auth, { userId: user.id }).expect(200)).body).toEqual({
        isSuperAdmin: false,
        features: ['auth.roles.manage'],
        organizations: [admin.tenant.organizationId],
        hasCustomAcl: true,
      });
      expect(await userAclRow(user.id)).toEqual({
        tenant_id: admin.tenant.id,
        is_super_admin: false,
        features: ['auth.roles.manage'],
        organizations: [admin.tenant.organizationId],
      });
    });

    it('omitted fields keep their stored values; features never vanish by omission', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const second = await addOrganization(admin.tenant.id);
      const user = await f.user(admin.tenant);
      await putUserAcl(admin.auth, { userId: user.id, features: ['auth.roles.list', 'auth.acl.manage'] }).expect(200);
      await putUserAcl(admin.auth, { userId: user.id, organizations: [second] }).expect(200);
      expect(await userAclRow(user.id)).toMatchObject({ features: ['auth.roles.list', 'auth.acl.manage'], organizations: [second] });
      await putUserAcl(admin.auth, { userId: user.id }).expect(200);
      await putUserAcl(admin.auth, { userId: user.id, isSuperAdmin: false }).expect(200);
      expect(await userAclRow(user.id)).toMatchObject({ features: ['auth.roles.list', 'auth.acl.manage'], organizations: [second] });
      await putUserAcl(admin.auth, { userId: user.id, features: ['auth.roles.list'], organizations: null }).expect(200);
      expect(await userAclRow(user.id)).toMatchObject({ features: ['auth.roles.list'], organizations: null });
    });

    it('a user ACL replaces the role ACLs on the user’s next request; emptying it restores the roles', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const role = await f.role(admin.tenant.id, { features: ['auth.roles.list'] });
      const user = await member(admin.tenant, [role.id]);
      const check = async () =>
        (
          await request(t.url)
            .post('/auth/feature-check')
            .set(user.auth)
            .send({ features: ['auth.roles.list', 'auth.acl.manage'] })
            .expect(200)
        ).body.granted;
      await request(t.url).get('/auth/roles').set(user.auth).expect(200); // resolved and cached
      expect(await check()).toEqual(['auth.roles.list']);

      await putUserAcl(admin.auth, { userId: user.id, features: ['auth.acl.manage'] }).expect(200);
      expect(await check()).toEqual(['auth.acl.manage']);
      await request(t.url).get('/auth/roles').set(user.auth).expect(403);
      expect((await getUserAcl(user.auth, { userId: user.id }).expect(200)).body).toMatchObject({ hasCustomAcl: true });

      const res = await putUserAcl(admin.auth, { userId: user.id, features: [] }).expect(200);
      expect(res.body).toEqual({ ok: true, sanitized: false });
      expect(await userAclRow(user.id)).toBeUndefined();
      expect(await check()).toEqual(['auth.roles.list']);
      await request(t.url).get('/auth/roles').set(user.auth).expect(200);
      expect((await getUserAcl(admin.auth, { userId: user.id }).expect(200)).body).toEqual({ ...NO_ACL, hasCustomAcl: false });
    });

    it('grant boundary: `*`, ungranted features and isSuperAdmin are dropped with sanitized: true', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const user = await f.user(admin.tenant);
      const res = await putUserAcl(admin.auth, {
        userId: user.id,
        features: ['*', 'auth.users.list', 'auth.roles.list', 'auth.*'],
        isSuperAdmin: true,
      }).expect(200);
      expect(res.body).toEqual({ ok: true, sanitized: true });
      expect(await userAclRow(user.id)).toMatchObject({ is_super_admin: false, features: ['auth.roles.list'] });

      // Nothing grantable left: no ACL is stored at all.
      const other = await f.user(admin.tenant);
      expect(
        (await putUserAcl(admin.auth, { userId: other.id, features: ['auth.users.list'], isSuperAdmin: true }).expect(200)).body,
      ).toEqual({
        ok: true,
        sanitized: true,
      });
      expect(await userAclRow(other.id)).toBeUndefined();

      // A wildcard the caller holds is granted as is.
      expect((await putUserAcl(admin.auth, { userId: user.id, features: ['auth.roles.*'] }).expect(200)).body).toEqual({
        ok: true,
        sanitized: false,
      });
      expect(await userAclRow(user.id)).toMatchObject({ is_super_admin: false, features: ['auth.roles.*'] });
    });

    it('grant boundary: an organization-restricted caller’s organizations are narrowed (sanitized)', async () => {
      const tenant = await f.tenant();
      const second = await addOrganization(tenant.id);
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN, organizations: [tenant.organizationId] }, tenant);
      const user = await f.user(tenant);
      const res = await putUserAcl(admin.auth, {
        userId: user.id,
        features: ['auth.roles.list'],
        organizations: [second, tenant.organizationId],
      }).expect(200);
      expect(res.body).toEqual({ ok: true, sanitized: true });
      expect(await userAclRow(user.id)).toMatchObject({ organizations: [tenant.organizationId] });
    });

    it('a super-administrator target is 403 for non super administrators (through a role or its own ACL)', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const superRole = await f.role(admin.tenant.id, { isSuperAdmin: true });
      const viaRole = await f.user(admin.tenant, { roleIds: [superRole.id] });
      const viaAcl = await f.user(admin.tenant);
      await ds.query(`INSERT INTO user_acls (tenant_id, user_id, is_super_admin, features) VALUES ($1, $2, true, '{}')`, [
        admin.tenant.id,
        viaAcl.id,
      ]);
      for (const target of [viaRole, viaAcl]) {
        expect((await getUserAcl(admin.auth, { userId: target.id }).expect(403)).body).toEqual({ error: expect.any(String) });
        expect(
          (await putUserAcl(admin.auth, { userId: target.id, features: ['auth.roles.list'], isSuperAdmin: false }).expect(403)).body,
        ).toEqual({
          error: expect.any(String),
        });
      }
      expect(await userAclRow(viaRole.id)).toBeUndefined();
      expect(await userAclRow(viaAcl.id)).toMatchObject({ is_super_admin: true });

      const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true }, admin.tenant);
      expect((await getUserAcl(superAdmin.auth, { userId: viaAcl.id }).expect(200)).body).toEqual({
        isSuperAdmin: true,
        features: [],
        organizations: null,
        hasCustomAcl: true,
      });
      // A super administrator may revoke it; with nothing left the ACL is removed.
      await putUserAcl(superAdmin.auth, { userId: viaAcl.id, isSuperAdmin: false }).expect(200);
      expect(await userAclRow(viaAcl.id)).toBeUndefined();
      await putUserAcl(superAdmin.auth, { userId: viaRole.id, features: ['*'], isSuperAdmin: true }).expect(200);
      expect(await userAclRow(viaRole.id)).toMatchObject({ is_super_admin: true, features: ['*'] });
    });

    it('tenant isolation: users of another tenant are 404; super administrators reach them in their tenant', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const other = await f.tenant();
      const foreign = await f.user(other);
      const gone = await f.user(admin.tenant);
      await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [gone.id]);
      for (const userId of [foreign.id, UNKNOWN_ID, gone.id]) {
        expect((await getUserAcl(admin.auth, { userId }).expect(404)).body).toEqual({ error: 'user not found' });
        expect((await putUserAcl(admin.auth, { userId, features: ['auth.roles.list'] }).expect(404)).body).toEqual({
          error: 'user not found',
        });
      }
      expect(await userAclRow(foreign.id)).toBeUndefined();

      const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true });
      await putUserAcl(superAdmin.auth, {
        userId: foreign.id,
        features: ['auth.users.list'],
        organizations: [other.organizationId],
      }).expect(200);
      expect(await userAclRow(foreign.id)).toEqual({
        tenant_id: other.id,
        is_super_admin: false,
        features: ['auth.users.list'],
        organizations: [other.organizationId],
      });
      expect((await getUserAcl(superAdmin.auth, { userId: foreign.id }).expect(200)).body).toMatchObject({
        features: ['auth.users.list'],
        hasCustomAcl: true,
      });
    });

    it('400 {error} for an invalid user id or payload, and for organizations outside the user’s tenant', async () => {
      const admin = await f.loggedInUser(t, { features: ACL_ADMIN });
      const user = await f.user(admin.tenant);
      for (const query of [{}, { userId: 'nope' }]) {
        expect((await getUserAcl(admin.auth, query).expect(400)).body).toMatchObject({ error: expect.any(String) });
      }
      for (const body of [
        {},
        { userId: 'nope', features: [] },
        { userId: user.id, features: 'auth.roles.list' },
        { userId: user.id, features: [''] },
        { userId: user.id, features: ['x'.repeat(129)] },
        { userId: user.id, features: Array.from({ length: 501 }, (_, i) => `f.${i}`) },
        { userId: user.id, isSuperAdmin: 1 },
        { userId: user.id, organizations: ['nope'] },
      ]) {
        expect((await putUserAcl(admin.auth, body).expect(400)).body).toMatchObject({ error: expect.any(String) });
      }
      const foreignOrg = (await f.tenant()).organizationId;
      await putUserAcl(admin.auth, { userId: user.id, features: ['auth.roles.list'], organizations: [foreignOrg] }).expect(400);
      expect(await userAclRow(user.id)).toBeUndefined();
    });
  });

  it('the statements role_acls and user_acls share: find and upsert per tenant; a restore leaves a matching row untouched', async () => {
    const tenant = await f.tenant();
    const other = await f.tenant();
    const scope = systemScope(tenant.id);
    const user = await f.user(tenant);
    const role = await f.role(null);
    const users = t.app.get(UserAclRepository);
    const roles = t.app.get(RoleAclRepository);
    const acl = { isSuperAdmin: false, features: ['users.view'], organizations: [tenant.organizationId] };
    await users.upsert(ds, scope, { userId: user.id, acl });
    await roles.upsert(ds, scope, { roleId: role.id, acl });
    expect(await users.find(ds, scope, user.id)).toEqual(acl);
    expect(await roles.find(ds, scope, role.id)).toEqual(acl);
    expect(await users.find(ds, systemScope(other.id), user.id)).toBeNull();
    expect(await roles.find(ds, systemScope(other.id), role.id)).toBeNull();

    const updatedAt = async () =>
      (await ds.query<{ updated_at: Date }[]>('SELECT updated_at FROM user_acls WHERE user_id = $1', [user.id]))[0].updated_at.getTime();
    await ds.query(`UPDATE user_acls SET updated_at = now() - interval '1 day' WHERE user_id = $1`, [user.id]);
    const before = await updatedAt();
    await users.restore(ds, scope, { userId: user.id, acl });
    expect(await updatedAt()).toBe(before);
    const changed = { ...acl, organizations: null };
    await users.restore(ds, scope, { userId: user.id, acl: changed });
    expect(await updatedAt()).toBeGreaterThan(before);
    expect(await users.find(ds, scope, user.id)).toEqual(changed);
    await users.restore(ds, scope, { userId: user.id, acl: null });
    expect(await users.find(ds, scope, user.id)).toBeNull();
  });
});
