import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories, login, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Tenant = { id: string; organizationId: string };
type Auth = { Authorization: string };

const ADMIN_FEATURES = ['auth.users.*', 'crm.*'];

describe('POST, PUT and DELETE /auth/users', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenantA: Tenant;
  let tenantB: Tenant;
  let adminA: { auth: Auth; user: { id: string } };
  let adminB: Auth;
  let superAdmin: Auth;
  let crmRole: { id: string; name: string };
  let billingRole: { id: string; name: string };
  let superRoleA: { id: string; name: string };
  let globalRole: { id: string; name: string };
  let roleOfB: { id: string; name: string };

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenantA = await f.tenant('Tenant A');
    tenantB = await f.tenant('Tenant B');
    const a = await f.loggedInUser(t, { features: ADMIN_FEATURES }, tenantA);
    adminA = { auth: a.auth, user: a.user };
    adminB = (await f.loggedInUser(t, { features: ADMIN_FEATURES }, tenantB)).auth;
    superAdmin = (await f.loggedInUser(t, { isSuperAdmin: true })).auth;
    crmRole = await f.role(tenantA.id, { features: ['crm.contacts.view'] }, { name: 'crm viewer' });
    billingRole = await f.role(tenantA.id, { features: ['billing.invoices.view'] }, { name: 'billing' });
    superRoleA = await f.role(tenantA.id, { isSuperAdmin: true }, { name: 'superadmin' });
    globalRole = await f.role(null, { features: ['crm.deals.view'] }, { name: 'global crm', aclTenantId: tenantA.id });
    roleOfB = await f.role(tenantB.id, { features: ['crm.contacts.view'] }, { name: 'b role' });
  });
  afterAll(async () => {
    await t.close();
  });

  const api = () => request(t.url);
  const userRow = async (id: string) =>
    (await ds.query('SELECT tenant_id, organization_id, email, name, password_hash, deleted_at FROM users WHERE id = $1', [id]))[0];
  const roleIdsOf = async (userId: string) =>
    (await ds.query('SELECT role_id FROM user_roles WHERE user_id = $1 ORDER BY role_id', [userId])).map(
      (r: { role_id: string }) => r.role_id,
    );
  const usersWithEmail = async (email: string) => (await ds.query('SELECT id FROM users WHERE email = $1', [email])).length;

  describe('POST /auth/users', () => {
    it('201 {id}: lower-cased email, the caller’s tenant and organization, roles assigned, the password works', async () => {
      const res = await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'New.Person@Example.com', password: 'secret-pass-1', name: '  New Person ', roleIds: [crmRole.id, globalRole.id] })
        .expect(201);
      expect(res.body).toEqual({ id: expect.any(String) });
      const row = await userRow(res.body.id);
      expect(row).toMatchObject({
        tenant_id: tenantA.id,
        organization_id: tenantA.organizationId,
        email: 'new.person@example.com',
        name: 'New Person',
        deleted_at: null,
      });
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect(await roleIdsOf(res.body.id)).toEqual([crmRole.id, globalRole.id].sort());
      const token = await login(t, 'new.person@example.com', 'secret-pass-1');
      const profile = await api().get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200);
      expect(profile.body.roles.sort()).toEqual(['crm viewer', 'global crm']);
      // No password was given: no invitation.
      expect((await ds.query('SELECT 1 FROM auth_tokens WHERE user_id = $1', [res.body.id])).length).toBe(0);
    });

    it('without a password: a user without password and a live 48-hour invitation token', async () => {
      const res = await api().post('/auth/users').set(adminA.auth).send({ email: 'invitee@example.com' }).expect(201);
      expect((await userRow(res.body.id)).password_hash).toBeNull();
      const tokens = await ds.query(`SELECT purpose, expires_at, used_at FROM auth_tokens WHERE user_id = $1`, [res.body.id]);
      expect(tokens).toHaveLength(1);
      expect(tokens[0]).toMatchObject({ purpose: 'invitation', used_at: null });
      expect((new Date(tokens[0].expires_at).getTime() - Date.now()) / 3_600_000).toBeGreaterThan(47.9);
    });

    it('400 for an invalid payload', async () => {
      for (const body of [
        {},
        { email: 'not-an-email' },
        { email: 'short@example.com', password: 'short' },
        { email: 'roles@example.com', roleIds: ['nope'] },
        { email: 'roles@example.com', roleIds: 'nope' },
        { email: 'org@example.com', organizationId: 'nope' },
        { email: 'tenant@example.com', tenantId: 'nope' },
      ]) {
        const res = await api().post('/auth/users').set(adminA.auth).send(body).expect(400);
        expect(res.body.error).toMatch(/^validation failed/);
      }
    });

    it('409 {error: "email already exists"} for a duplicate email in the tenant (any case); another tenant may reuse it', async () => {
      await api().post('/auth/users').set(adminA.auth).send({ email: 'dup@example.com', password: 'secret-pass-1' }).expect(201);
      const dup = await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'DUP@example.com', password: 'secret-pass-1' })
        .expect(409);
      expect(dup.body).toEqual({ error: 'email already exists' });
      expect(await usersWithEmail('dup@example.com')).toBe(1);
      await api().post('/auth/users').set(adminB).send({ email: 'dup@example.com', password: 'secret-pass-1' }).expect(201);
    });

    it('403 when a caller who is not a super administrator names another tenant; its own tenant is fine', async () => {
      const res = await api().post('/auth/users').set(adminA.auth).send({ email: 'cross@example.com', tenantId: tenantB.id }).expect(403);
      expect(res.body).toEqual({ error: 'only a super administrator may create users in another tenant' });
      expect(await usersWithEmail('cross@example.com')).toBe(0);
      await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'own@example.com', password: 'secret-pass-1', tenantId: tenantA.id })
        .expect(201);
    });

    it('a super administrator creates a user in another tenant, with that tenant’s organization and role', async () => {
      const res = await api()
        .post('/auth/users')
        .set(superAdmin)
        .send({
          email: 'made-by-super@example.com',
          password: 'secret-pass-1',
          tenantId: tenantB.id,
          organizationId: tenantB.organizationId,
          roleIds: [roleOfB.id],
        })
        .expect(201);
      expect(await userRow(res.body.id)).toMatchObject({ tenant_id: tenantB.id, organization_id: tenantB.organizationId });
      expect(await roleIdsOf(res.body.id)).toEqual([roleOfB.id]);
      const listed = await api().get('/auth/users').query({ id: res.body.id }).set(adminB).expect(200);
      expect(listed.body.items[0]).toMatchObject({ email: 'made-by-super@example.com', roles: [{ id: roleOfB.id, name: 'b role' }] });
      // In another tenant the organization defaults to none, not to the super administrator's own.
      const noOrg = await api()
        .post('/auth/users')
        .set(superAdmin)
        .send({ email: 'no-org@example.com', password: 'secret-pass-1', tenantId: tenantB.id })
        .expect(201);
      expect((await userRow(noOrg.body.id)).organization_id).toBeNull();
      const unknown = await api()
        .post('/auth/users')
        .set(superAdmin)
        .send({ email: 'ghost-tenant@example.com', tenantId: randomUUID() })
        .expect(400);
      expect(unknown.body).toEqual({ error: 'tenant not found' });
    });

    it('400 for an organization of another tenant or a role not usable in the tenant', async () => {
      const org = await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'o@example.com', organizationId: tenantB.organizationId })
        .expect(400);
      expect(org.body).toEqual({ error: 'organization not found in the tenant' });
      const foreignRole = await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'r@example.com', roleIds: [roleOfB.id] })
        .expect(400);
      expect(foreignRole.body).toEqual({ error: `unknown role: ${roleOfB.id}` });
      const ghost = randomUUID();
      await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'r@example.com', roleIds: [crmRole.id, ghost] })
        .expect(400, { error: `unknown role: ${ghost}` });
      expect(await usersWithEmail('o@example.com')).toBe(0);
      expect(await usersWithEmail('r@example.com')).toBe(0);
    });

    it('privilege escalation is refused: a super administrator role or one granting features the caller lacks is 403, nothing is written', async () => {
      const sup = await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'esc1@example.com', password: 'secret-pass-1', roleIds: [superRoleA.id] })
        .expect(403);
      expect(sup.body).toEqual({ error: 'you may not assign role "superadmin": it grants access you do not have' });
      const billing = await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'esc2@example.com', roleIds: [crmRole.id, billingRole.id] })
        .expect(403);
      expect(billing.body.error).toMatch(/billing/);
      const star = await f.role(tenantA.id, { features: ['*'] });
      await api()
        .post('/auth/users')
        .set(adminA.auth)
        .send({ email: 'esc3@example.com', roleIds: [star.id] })
        .expect(403);
      expect(await usersWithEmail('esc1@example.com')).toBe(0);
      expect(await usersWithEmail('esc2@example.com')).toBe(0);
      expect(await usersWithEmail('esc3@example.com')).toBe(0);
      expect((await ds.query('SELECT 1 FROM auth_tokens t JOIN users u ON u.id = t.user_id WHERE u.email LIKE $1', ['esc%'])).length).toBe(
        0,
      );
      // A super administrator may.
      await api()
        .post('/auth/users')
        .set(superAdmin)
        .send({ email: 'esc1@example.com', password: 'secret-pass-1', tenantId: tenantA.id, roleIds: [superRoleA.id] })
        .expect(201);
    });

    it('organization restriction: only the caller’s organizations (403), never none', async () => {
      const [{ id: otherOrg }] = await ds.query(
        `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'A other', $2) RETURNING id`,
        [tenantA.id, `a-${randomUUID().slice(0, 8)}`],
      );
      const restrictedRole = await f.role(tenantA.id, { features: ['crm.contacts.view'], organizations: [tenantA.organizationId] });
      const restricted = await f.loggedInUser(t, { features: ADMIN_FEATURES, organizations: [tenantA.organizationId] }, tenantA);
      const res = await api()
        .post('/auth/users')
        .set(restricted.auth)
        .send({ email: 'r1@example.com', organizationId: otherOrg })
        .expect(403);
      expect(res.body).toEqual({ error: 'organization is outside your access' });
      // An unrestricted role would let the new user act beyond the caller's organizations.
      await api()
        .post('/auth/users')
        .set(restricted.auth)
        .send({ email: 'r2@example.com', roleIds: [crmRole.id] })
        .expect(403);
      const ok = await api()
        .post('/auth/users')
        .set(restricted.auth)
        .send({ email: 'r3@example.com', roleIds: [restrictedRole.id] })
        .expect(201);
      expect((await userRow(ok.body.id)).organization_id).toBe(tenantA.organizationId);
      expect(await usersWithEmail('r1@example.com')).toBe(0);
      expect(await usersWithEmail('r2@example.com')).toBe(0);
    });

    it('401 without a token, 403 without auth.users.create', async () => {
      await api().post('/auth/users').send({ email: 'x@example.com' }).expect(401);
      const { auth } = await f.loggedInUser(t, { features: ['auth.users.list'] }, tenantA);
      await api().post('/auth/users').set(auth).send({ email: 'x@example.com' }).expect(403);
    });
  });

  describe('PUT /auth/users', () => {
    it('200 {ok: true}: email, name and organization change; roleIds replaces the memberships', async () => {
      const user = await f.user(tenantA, { roleIds: [crmRole.id], name: 'Before' });
      const [{ id: org2 }] = await ds.query(`INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'A two', $2) RETURNING id`, [
        tenantA.id,
        `a-${randomUUID().slice(0, 8)}`,
      ]);
      const res = await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: user.id, email: 'Renamed@Example.com', name: 'After', organizationId: org2, roleIds: [globalRole.id] })
        .expect(200);
      expect(res.body).toEqual({ ok: true });
      expect(await userRow(user.id)).toMatchObject({ email: 'renamed@example.com', name: 'After', organization_id: org2 });
      expect(await roleIdsOf(user.id)).toEqual([globalRole.id]);
      // The ACL cache was invalidated: the new role applies at once.
      const token = await login(t, 'renamed@example.com', user.password);
      expect((await api().get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200)).body.roles).toEqual(['global crm']);
      await api().put('/auth/users').set(adminA.auth).send({ id: user.id, roleIds: [] }).expect(200);
      expect(await roleIdsOf(user.id)).toEqual([]);
      await api().put('/auth/users').set(adminA.auth).send({ id: user.id, name: null, organizationId: null }).expect(200);
      expect(await userRow(user.id)).toMatchObject({ name: null, organization_id: null });
    });

    it('a role change applies at once to the user’s live session (the cached ACL is invalidated)', async () => {
      const user = await f.user(tenantA, { roleIds: [crmRole.id] });
      const token = await login(t, user.email, user.password);
      const me = { Authorization: `Bearer ${token}` };
      expect((await api().get('/auth/profile').set(me).expect(200)).body.roles).toEqual(['crm viewer']);
      await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: user.id, roleIds: [globalRole.id] })
        .expect(200);
      expect((await api().get('/auth/profile').set(me).expect(200)).body.roles).toEqual(['global crm']);
    });

    it('a new password ends the user’s sessions; the new password works', async () => {
      const user = await f.user(tenantA, { roleIds: [crmRole.id] });
      const token = await login(t, user.email, user.password);
      await api().get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200);
      await api().put('/auth/users').set(adminA.auth).send({ id: user.id, password: 'changed-by-admin' }).expect(200, { ok: true });
      await api().get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(401);
      await login(t, user.email, 'changed-by-admin');
      const old = await api()
        .post('/auth/login')
        .set('X-Forwarded-For', testIp())
        .type('form')
        .send({ email: user.email, password: user.password })
        .expect(401);
      expect(old.body).toEqual({ ok: false, error: 'invalid credentials' });
    });

    it('400 for an invalid payload or nothing to update', async () => {
      const user = await f.user(tenantA);
      await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: user.id })
        .expect(400, { error: 'nothing to update: give email, password, name, roleIds or organizationId' });
      await api().put('/auth/users').set(adminA.auth).send({ id: 'nope', name: 'x' }).expect(400);
      await api().put('/auth/users').set(adminA.auth).send({ name: 'x' }).expect(400);
      await api().put('/auth/users').set(adminA.auth).send({ id: user.id, email: 'bad' }).expect(400);
      await api().put('/auth/users').set(adminA.auth).send({ id: user.id, password: 'short' }).expect(400);
      await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: user.id, organizationId: tenantB.organizationId })
        .expect(400, { error: 'organization not found in the tenant' });
      await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: user.id, roleIds: [roleOfB.id] })
        .expect(400, { error: `unknown role: ${roleOfB.id}` });
    });

    it('404 for an unknown user, a deleted user, or a user of another tenant (left unchanged)', async () => {
      await api().put('/auth/users').set(adminA.auth).send({ id: randomUUID(), name: 'x' }).expect(404, { error: 'user not found' });
      const gone = await f.user(tenantA);
      await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [gone.id]);
      await api().put('/auth/users').set(adminA.auth).send({ id: gone.id, name: 'x' }).expect(404);
      const inB = await f.user(tenantB, { name: 'B person', roleIds: [roleOfB.id] });
      const before = await userRow(inB.id);
      await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: inB.id, name: 'hijacked', password: 'hijacked-pass' })
        .expect(404, { error: 'user not found' });
      expect(await userRow(inB.id)).toEqual(before);
      await login(t, inB.email, inB.password);
    });

    it('403 when one who is not a super administrator edits a super administrator, or a user with features it lacks', async () => {
      const boss = await f.user(tenantA, { roleIds: [superRoleA.id], name: 'Boss' });
      const res = await api().put('/auth/users').set(adminA.auth).send({ id: boss.id, password: 'taken-over-1' }).expect(403);
      expect(res.body).toEqual({ error: 'only a super administrator may manage a super administrator' });
      const accountant = await f.user(tenantA, { roleIds: [billingRole.id], name: 'Accountant' });
      const denied = await api().put('/auth/users').set(adminA.auth).send({ id: accountant.id, email: 'mine@example.com' }).expect(403);
      expect(denied.body).toEqual({ error: 'user holds features you do not have' });
      expect(await userRow(boss.id)).toMatchObject({ name: 'Boss' });
      expect(await userRow(accountant.id)).toMatchObject({ email: accountant.email });
      await login(t, boss.email, boss.password);
      // A super administrator may.
      await api().put('/auth/users').set(superAdmin).send({ id: boss.id, name: 'Big Boss' }).expect(200);
      expect(await userRow(boss.id)).toMatchObject({ name: 'Big Boss' });
    });

    it('privilege escalation through roleIds is 403 and leaves the memberships alone', async () => {
      const user = await f.user(tenantA, { roleIds: [crmRole.id] });
      await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: user.id, roleIds: [crmRole.id, superRoleA.id] })
        .expect(403);
      await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: user.id, roleIds: [billingRole.id] })
        .expect(403);
      // Nor onto the caller itself.
      await api()
        .put('/auth/users')
        .set(adminA.auth)
        .send({ id: adminA.user.id, roleIds: [superRoleA.id] })
        .expect(403);
      expect(await roleIdsOf(user.id)).toEqual([crmRole.id]);
      expect(await roleIdsOf(adminA.user.id)).toHaveLength(1);
    });

    it('409 {error: "email already exists"} when the email belongs to another user of the tenant', async () => {
      const one = await f.user(tenantA);
      const two = await f.user(tenantA);
      const res = await api().put('/auth/users').set(adminA.auth).send({ id: two.id, email: one.email.toUpperCase() }).expect(409);
      expect(res.body).toEqual({ error: 'email already exists' });
      // Its own email again is no conflict.
      await api().put('/auth/users').set(adminA.auth).send({ id: two.id, email: two.email }).expect(200);
    });

    it('a super administrator edits a user of another tenant, with that tenant’s roles', async () => {
      const inB = await f.user(tenantB);
      await api()
        .put('/auth/users')
        .set(superAdmin)
        .send({ id: inB.id, roleIds: [roleOfB.id], name: 'Set by super' })
        .expect(200);
      expect(await roleIdsOf(inB.id)).toEqual([roleOfB.id]);
      await api()
        .put('/auth/users')
        .set(superAdmin)
        .send({ id: inB.id, roleIds: [crmRole.id] })
        .expect(400);
    });

    it('a caller restricted to organizations cannot edit users of other organizations (403)', async () => {
      const [{ id: otherOrg }] = await ds.query(
        `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'A three', $2) RETURNING id`,
        [tenantA.id, `a-${randomUUID().slice(0, 8)}`],
      );
      const restricted = await f.loggedInUser(t, { features: ADMIN_FEATURES, organizations: [tenantA.organizationId] }, tenantA);
      const elsewhere = await f.user({ id: tenantA.id, organizationId: otherOrg }, { name: 'Elsewhere' });
      await api()
        .put('/auth/users')
        .set(restricted.auth)
        .send({ id: elsewhere.id, name: 'x' })
        .expect(403, { error: 'user is outside your organizations' });
      const here = await f.user(tenantA);
      await api().put('/auth/users').set(restricted.auth).send({ id: here.id, organizationId: otherOrg }).expect(403);
      await api().put('/auth/users').set(restricted.auth).send({ id: here.id, organizationId: null }).expect(403);
      await api().put('/auth/users').set(restricted.auth).send({ id: here.id, name: 'fine' }).expect(200);
    });

    it('401 without a token, 403 without auth.users.edit', async () => {
      await api().put('/auth/users').send({ id: randomUUID(), name: 'x' }).expect(401);
      const { auth } = await f.loggedInUser(t, { features: ['auth.users.list', 'auth.users.create'] }, tenantA);
      await api().put('/auth/users').set(auth).send({ id: randomUUID(), name: 'x' }).expect(403);
    });
  });

  describe('DELETE /auth/users', () => {
    it('200 {ok: true}: soft delete, memberships and user ACL gone, login refused, the existing token 401, the email free again', async () => {
      const user = await f.user(tenantA, { roleIds: [crmRole.id] });
      await ds.query(`INSERT INTO user_acls (tenant_id, user_id, features) VALUES ($1, $2, '{crm.contacts.view}')`, [tenantA.id, user.id]);
      const token = await login(t, user.email, user.password);
      await api().get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200);

      await api().delete('/auth/users').query({ id: user.id }).set(adminA.auth).expect(200, { ok: true });

      expect((await userRow(user.id)).deleted_at).not.toBeNull();
      expect(await roleIdsOf(user.id)).toEqual([]);
      expect((await ds.query('SELECT 1 FROM user_acls WHERE user_id = $1', [user.id])).length).toBe(0);
      expect((await ds.query('SELECT 1 FROM sessions WHERE user_id = $1', [user.id])).length).toBe(0);
      await api().get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(401);
      const relogin = await api()
        .post('/auth/login')
        .set('X-Forwarded-For', testIp())
        .type('form')
        .send({ email: user.email, password: user.password })
        .expect(401);
      expect(relogin.body).toEqual({ ok: false, error: 'invalid credentials' });
      const listed = await api().get('/auth/users').query({ id: user.id }).set(adminA.auth).expect(200);
      expect(listed.body.total).toBe(0);
      await api().post('/auth/users').set(adminA.auth).send({ email: user.email, password: 'secret-pass-1' }).expect(201);
      // Deleting again: it no longer exists.
      await api().delete('/auth/users').query({ id: user.id }).set(adminA.auth).expect(404);
    });

    it('voids a deleted user’s pending invitation token', async () => {
      const created = await api().post('/auth/users').set(adminA.auth).send({ email: 'never-joins@example.com' }).expect(201);
      await api().delete('/auth/users').query({ id: created.body.id }).set(adminA.auth).expect(200);
      const live = await ds.query('SELECT 1 FROM auth_tokens WHERE user_id = $1 AND used_at IS NULL', [created.body.id]);
      expect(live).toHaveLength(0);
    });

    it('400 for a missing or malformed id, and for the caller’s own account', async () => {
      const missing = await api().delete('/auth/users').set(adminA.auth).expect(400);
      expect(missing.body.error).toMatch(/id/);
      await api().delete('/auth/users').query({ id: 'nope' }).set(adminA.auth).expect(400);
      await api()
        .delete('/auth/users')
        .query({ id: adminA.user.id })
        .set(adminA.auth)
        .expect(400, { error: 'you cannot delete your own account' });
      expect((await userRow(adminA.user.id)).deleted_at).toBeNull();
    });

    it('404 for an unknown user or a user of another tenant (left alone)', async () => {
      await api().delete('/auth/users').query({ id: randomUUID() }).set(adminA.auth).expect(404, { error: 'user not found' });
      const inB = await f.user(tenantB, { roleIds: [roleOfB.id] });
      await api().delete('/auth/users').query({ id: inB.id }).set(adminA.auth).expect(404, { error: 'user not found' });
      expect((await userRow(inB.id)).deleted_at).toBeNull();
      expect(await roleIdsOf(inB.id)).toEqual([roleOfB.id]);
    });

    it('403 for deleting a super administrator when not one; a super administrator may, in any tenant', async () => {
      const boss = await f.user(tenantA, { roleIds: [superRoleA.id] });
      await api()
        .delete('/auth/users')
        .query({ id: boss.id })
        .set(adminA.auth)
        .expect(403, { error: 'only a super administrator may manage a super administrator' });
      expect((await userRow(boss.id)).deleted_at).toBeNull();
      await api().delete('/auth/users').query({ id: boss.id }).set(superAdmin).expect(200);
      const inB = await f.user(tenantB);
      await api().delete('/auth/users').query({ id: inB.id }).set(superAdmin).expect(200);
      expect((await userRow(inB.id)).deleted_at).not.toBeNull();
    });

    it('401 without a token, 403 without auth.users.delete', async () => {
      await api().delete('/auth/users').query({ id: randomUUID() }).expect(401);
      const { auth } = await f.loggedInUser(t, { features: ['auth.users.edit'] }, tenantA);
      await api().delete('/auth/users').query({ id: randomUUID() }).set(auth).expect(403);
    });
  });
});
