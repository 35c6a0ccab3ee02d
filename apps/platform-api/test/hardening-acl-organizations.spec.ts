import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
/** A tenant administrator who may manage ACLs, roles and users, restricted to some organizations in the tests. */
const ADMIN = ['auth.acl.manage', 'auth.roles.*', 'auth.users.*'];

/**
 * Issue #11 item 1: a caller restricted to organizations cannot lift or widen anyone's organization
 * restriction (its own included) through the ACL endpoints, and cannot read or write the ACL of a
 * user outside its organizations.
 */
describe('ACL organizations: an organization-restricted caller never widens a restriction', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  const putUserAcl = (auth: Auth, body: object) => request(t.url).put('/auth/users/acl').set(auth).send(body);
  const getUserAcl = (auth: Auth, userId: string) => request(t.url).get('/auth/users/acl').set(auth).query({ userId });
  const putRoleAcl = (auth: Auth, body: object) => request(t.url).put('/auth/roles/acl').set(auth).send(body);
  const userAclRow = async (userId: string) =>
    (await ds.query('SELECT is_super_admin, features, organizations FROM user_acls WHERE user_id = $1', [userId]))[0] ?? null;
  const roleAclRow = async (roleId: string, tenantId: string) =>
    (await ds.query('SELECT features, organizations FROM role_acls WHERE role_id = $1 AND tenant_id = $2', [roleId, tenantId]))[0] ?? null;
  const addOrganization = async (tenantId: string) =>
    (
      await ds.query(`INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'Second', 'org-' || gen_random_uuid()) RETURNING id`, [
        tenantId,
      ])
    )[0].id as string;
  const storeUserAcl = (tenantId: string, userId: string, features: string[], organizations: string[] | null) =>
    ds.query('INSERT INTO user_acls (tenant_id, user_id, features, organizations) VALUES ($1, $2, $3, $4)', [
      tenantId,
      userId,
      features,
      organizations === null ? null : JSON.stringify(organizations),
    ]);

  /** A tenant with organizations A (its first) and B, and an administrator restricted to A. */
  async function restrictedSetup() {
    const tenant = await f.tenant();
    const orgB = await addOrganization(tenant.id);
    const admin = await f.loggedInUser(t, { features: ADMIN, organizations: [tenant.organizationId] }, tenant);
    return { tenant, orgA: tenant.organizationId, orgB, admin };
  }

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('PUT /auth/users/acl', () => {
    it('organizations omitted and no stored ACL: the new ACL inherits the caller’s restriction (not null)', async () => {
      const { tenant, orgA, admin } = await restrictedSetup();
      const target = await f.user(tenant);
      const res = await putUserAcl(admin.auth, { userId: target.id, features: ['auth.roles.list'] }).expect(200);
      expect(res.body).toEqual({ ok: true, sanitized: false });
      expect(await userAclRow(target.id)).toEqual({ is_super_admin: false, features: ['auth.roles.list'], organizations: [orgA] });
    });

    it('the caller cannot lift its own restriction by writing its own ACL without organizations', async () => {
      const { orgA, orgB, admin } = await restrictedSetup();
      await request(t.url).get('/auth/users').set(admin.auth).query({ organizationId: orgB }).expect(403);
      await putUserAcl(admin.auth, { userId: admin.user.id, features: ADMIN }).expect(200);
      expect(await userAclRow(admin.user.id)).toMatchObject({ organizations: [orgA] });
      // Its next request still runs restricted to A.
      await request(t.url).get('/auth/users').set(admin.auth).query({ organizationId: orgB }).expect(403);
      await request(t.url).get('/auth/users').set(admin.auth).query({ organizationId: orgA }).expect(200);
    });

    it('a stored ACL wider than the caller’s restriction is narrowed on any write (sanitized), even with organizations omitted', async () => {
      const { tenant, orgA, orgB, admin } = await restrictedSetup();
      const wide = await f.user(tenant);
      await storeUserAcl(tenant.id, wide.id, ['auth.users.list'], [orgA, orgB]);
      const unrestricted = await f.user(tenant);
      await storeUserAcl(tenant.id, unrestricted.id, ['auth.users.list'], null);

      for (const target of [wide, unrestricted]) {
        const res = await putUserAcl(admin.auth, { userId: target.id, features: ['auth.roles.list'] }).expect(200);
        expect(res.body).toEqual({ ok: true, sanitized: true });
        expect(await userAclRow(target.id)).toEqual({ is_super_admin: false, features: ['auth.roles.list'], organizations: [orgA] });
      }
    });

    it('explicit null or organizations outside the restriction are narrowed (sanitized); never null, never B', async () => {
      const { tenant, orgA, orgB, admin } = await restrictedSetup();
      const target = await f.user(tenant);
      for (const organizations of [null, [orgB], [orgA, orgB]]) {
        const res = await putUserAcl(admin.auth, { userId: target.id, features: ['auth.roles.list'], organizations }).expect(200);
        expect(res.body).toEqual({ ok: true, sanitized: true });
        expect(await userAclRow(target.id)).toMatchObject({ organizations: organizations?.length === 1 ? [] : [orgA] });
      }
    });

    it('a user outside the caller’s organizations (or in none) is 404 for GET and PUT, and nothing is written', async () => {
      const { tenant, orgB, admin } = await restrictedSetup();
      const inB = await f.user({ id: tenant.id, organizationId: orgB });
      const inNone = await f.user(tenant);
      await ds.query('UPDATE users SET organization_id = NULL WHERE id = $1', [inNone.id]);
      for (const target of [inB, inNone]) {
        expect((await getUserAcl(admin.auth, target.id).expect(404)).body).toEqual({ error: 'user not found' });
        expect((await putUserAcl(admin.auth, { userId: target.id, features: ['auth.roles.list'] }).expect(404)).body).toEqual({
          error: 'user not found',
        });
        expect(await userAclRow(target.id)).toBeNull();
      }
      // An unrestricted administrator of the tenant reaches both.
      const unrestricted = await f.loggedInUser(t, { features: ADMIN }, tenant);
      await getUserAcl(unrestricted.auth, inB.id).expect(200);
      await putUserAcl(unrestricted.auth, { userId: inNone.id, features: ['auth.roles.list'] }).expect(200);
    });

    it('an unrestricted caller keeps today’s behaviour: organizations omitted with no stored ACL is null', async () => {
      const tenant = await f.tenant();
      const admin = await f.loggedInUser(t, { features: ADMIN }, tenant);
      const target = await f.user(tenant);
      expect((await putUserAcl(admin.auth, { userId: target.id, features: ['auth.roles.list'] }).expect(200)).body).toEqual({
        ok: true,
        sanitized: false,
      });
      expect(await userAclRow(target.id)).toMatchObject({ organizations: null });
    });
  });

  describe('PUT /auth/roles/acl', () => {
    it('organizations omitted: the ACL inherits the caller’s restriction; null or another organization is 403 and changes nothing', async () => {
      const { tenant, orgA, orgB, admin } = await restrictedSetup();
      const role = await f.role(tenant.id, { features: [], organizations: [orgA] });
      expect((await putRoleAcl(admin.auth, { roleId: role.id, features: ['auth.roles.list'] }).expect(200)).body).toEqual({
        ok: true,
        sanitized: false,
      });
      expect(await roleAclRow(role.id, tenant.id)).toEqual({ features: ['auth.roles.list'], organizations: [orgA] });
      for (const organizations of [null, [orgB], [orgA, orgB]]) {
        await putRoleAcl(admin.auth, { roleId: role.id, features: ['auth.users.list'], organizations }).expect(403);
      }
      expect(await roleAclRow(role.id, tenant.id)).toEqual({ features: ['auth.roles.list'], organizations: [orgA] });
    });
  });

  describe('managing users (grant boundary on organizations)', () => {
    it('a user whose access reaches beyond the caller’s organizations cannot be edited by it (403)', async () => {
      const { tenant, orgA, admin } = await restrictedSetup();
      const everywhere = await f.role(tenant.id, { features: ['auth.users.list'], organizations: null });
      const onlyA = await f.role(tenant.id, { features: ['auth.users.list'], organizations: [orgA] });
      const wide = await f.user(tenant, { roleIds: [everywhere.id] });
      const narrow = await f.user(tenant, { roleIds: [onlyA.id] });
      const res = await request(t.url).put('/auth/users').set(admin.auth).send({ id: wide.id, name: 'taken over' }).expect(403);
      expect(res.body).toEqual({ error: expect.any(String) });
      expect((await ds.query('SELECT name FROM users WHERE id = $1', [wide.id]))[0].name).toBeNull();
      await request(t.url).put('/auth/users').set(admin.auth).send({ id: narrow.id, name: 'fine' }).expect(200);
      // A user without any feature has no access anywhere: its organization scope is moot.
      const plain = await f.user(tenant);
      await request(t.url).put('/auth/users').set(admin.auth).send({ id: plain.id, name: 'fine too' }).expect(200);
    });
  });
});
