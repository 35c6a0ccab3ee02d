import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { commandSpecApp, type AuthHeaders } from './support/undo-redo.js';

const MANAGER = ['auth.*', 'audit_logs.*'];

describe('commands: PUT /auth/roles/acl and PUT /auth/users/acl are undoable', () => {
  const spec = commandSpecApp(MANAGER);
  const { manager, undo, redo, lastEntry } = spec;
  const roleAcls = (roleId: string) =>
    spec.ds.query(
      'SELECT id, tenant_id, is_super_admin, features, organizations, created_at FROM role_acls WHERE role_id = $1 ORDER BY tenant_id',
      [roleId],
    );
  const userAcl = async (userId: string) =>
    (
      await spec.ds.query('SELECT id, tenant_id, is_super_admin, features, organizations, created_at FROM user_acls WHERE user_id = $1', [
        userId,
      ])
    )[0] ?? null;
  const granted = async (auth: AuthHeaders, features: string[]) =>
    (await request(spec.t.url).post('/auth/feature-check').set(auth).send({ features }).expect(200)).body.granted;

  describe('PUT /auth/roles/acl (auth.roles.acl.update)', () => {
    it('X-Undo-Token; the entry records the role’s ACLs before and after; undo restores the exact rows, redo re-applies', async () => {
      const m = await manager();
      const role = await spec.f.role(m.tenant.id, { features: ['auth.users.list'] });
      const holder = await spec.f.loggedInUser(spec.t, { features: [] }, m.tenant);
      await spec.ds.query('INSERT INTO user_roles (user_id, role_id, tenant_id) VALUES ($1, $2, $3)', [
        holder.user.id,
        role.id,
        m.tenant.id,
      ]);
      const before = await roleAcls(role.id);
      expect(await granted(holder.auth, ['auth.users.list', 'auth.roles.list'])).toEqual(['auth.users.list']);

      const res = await request(spec.t.url)
        .put('/auth/roles/acl')
        .set(m.auth)
        .send({ roleId: role.id, features: ['auth.users.list', 'auth.roles.list'], organizations: [m.tenant.organizationId] })
        .expect(200);
      expect(res.body).toEqual({ ok: true, sanitized: false });
      const token = res.headers['x-undo-token'];
      expect(token).toEqual(expect.any(String));
      const after = await roleAcls(role.id);
      expect(after[0]).toMatchObject({ features: ['auth.users.list', 'auth.roles.list'], organizations: [m.tenant.organizationId] });
      expect(await granted(holder.auth, ['auth.users.list', 'auth.roles.list'])).toEqual(['auth.users.list', 'auth.roles.list']);

      const entry = await lastEntry(m.user.id);
      expect(entry).toMatchObject({
        command_id: 'auth.roles.acl.update',
        action_type: 'edit',
        resource_kind: 'auth.role',
        resource_id: role.id,
        parent_resource_kind: null,
        undo_token: token,
        execution_state: 'done',
        changed_fields: ['acls'],
      });
      const aclOf = (features: string[], organizations: string[] | null) => [
        { tenantId: m.tenant.id, isSuperAdmin: false, features, organizations },
      ];
      expect(entry.changes).toEqual({
        acls: { from: aclOf(['auth.users.list'], null), to: aclOf(['auth.users.list', 'auth.roles.list'], [m.tenant.organizationId]) },
      });
      expect(entry.snapshot_before).toMatchObject({ id: role.id, name: role.name, acls: aclOf(['auth.users.list'], null) });

      const undone = await undo(m.auth, token).expect(200);
      expect(undone.body).toEqual({ ok: true, logId: entry.id });
      expect(await roleAcls(role.id)).toEqual(before); // same row (id, created_at), previous values
      // afterCommit of the undo invalidated the ACL caches: the holder lost the feature at once.
      expect(await granted(holder.auth, ['auth.users.list', 'auth.roles.list'])).toEqual(['auth.users.list']);

      const redone = await redo(m.auth, entry.id).expect(200);
      expect(redone.body).toEqual({ ok: true, logId: entry.id, undoToken: expect.any(String) });
      expect(redone.body.undoToken).not.toBe(token);
      expect(await roleAcls(role.id)).toEqual(after);
      expect(await granted(holder.auth, ['auth.users.list', 'auth.roles.list'])).toEqual(['auth.users.list', 'auth.roles.list']);
    });

    it('a role without an ACL in the tenant: undo removes the ACL row the PUT created; the name and members are untouched', async () => {
      const m = await manager();
      const [role] = await spec.ds.query('INSERT INTO roles (tenant_id, name) VALUES ($1, $2) RETURNING id', [m.tenant.id, 'no acl yet']);
      const res = await request(spec.t.url)
        .put('/auth/roles/acl')
        .set(m.auth)
        .send({ roleId: role.id, features: ['auth.users.list'] })
        .expect(200);
      expect(await roleAcls(role.id)).toHaveLength(1);
      await undo(m.auth, res.headers['x-undo-token']).expect(200);
      expect(await roleAcls(role.id)).toEqual([]);
      expect((await spec.ds.query('SELECT name FROM roles WHERE id = $1', [role.id]))[0].name).toBe('no acl yet');
    });

    it('refused requests (403 beyond the grant boundary, 404) record nothing and carry no token', async () => {
      const m = await manager();
      const role = await spec.f.role(m.tenant.id, { features: [] });
      const count = async () =>
        (await spec.ds.query('SELECT count(*)::int AS n FROM action_logs WHERE actor_user_id = $1', [m.user.id]))[0].n;
      const res = await request(spec.t.url)
        .put('/auth/roles/acl')
        .set(m.auth)
        .send({ roleId: role.id, features: ['billing.view'] })
        .expect(403);
      expect(res.headers['x-undo-token']).toBeUndefined();
      await request(spec.t.url)
        .put('/auth/roles/acl')
        .set(m.auth)
        .send({ roleId: '5b6c9a8e-1f2d-4c3b-9a7e-0d1c2b3a4f5e', features: [] })
        .expect(404);
      expect(await count()).toBe(0);
    });

    it('an undo is refused (400) when the ACL changed since, and changes nothing', async () => {
      const m = await manager();
      const role = await spec.f.role(m.tenant.id, { features: ['auth.users.list'] });
      const res = await request(spec.t.url)
        .put('/auth/roles/acl')
        .set(m.auth)
        .send({ roleId: role.id, features: ['auth.roles.list'] })
        .expect(200);
      await spec.ds.query(`UPDATE role_acls SET features = '{auth.acl.manage}' WHERE role_id = $1`, [role.id]);
      await undo(m.auth, res.headers['x-undo-token']).expect(400);
      expect((await roleAcls(role.id))[0].features).toEqual(['auth.acl.manage']);
    });
  });

  describe('PUT /auth/users/acl (auth.users.acl.update)', () => {
    it('creating a custom ACL: undo removes it (role ACLs apply again), redo brings it back; a child entry of the user', async () => {
      const m = await manager();
      const role = await spec.f.role(m.tenant.id, { features: ['auth.users.list'] });
      const target = await spec.f.user(m.tenant, { roleIds: [role.id] });

      const res = await request(spec.t.url)
        .put('/auth/users/acl')
        .set(m.auth)
        .send({ userId: target.id, features: ['auth.roles.list', 'auth.acl.manage'], organizations: [m.tenant.organizationId] })
        .expect(200);
      expect(res.body).toEqual({ ok: true, sanitized: false });
      const token = res.headers['x-undo-token'];
      expect(token).toEqual(expect.any(String));
      const after = await userAcl(target.id);

      const entry = await lastEntry(m.user.id);
      expect(entry).toMatchObject({
        command_id: 'auth.users.acl.update',
        action_type: 'edit',
        resource_kind: 'auth.user_acl',
        resource_id: target.id,
        parent_resource_kind: 'auth.user',
        parent_resource_id: target.id,
        undo_token: token,
        snapshot_before: null,
        snapshot_after: {
          userId: target.id,
          tenantId: m.tenant.id,
          isSuperAdmin: false,
          features: ['auth.roles.list', 'auth.acl.manage'],
          organizations: [m.tenant.organizationId],
        },
      });
      expect(entry.changes.features).toEqual({ from: null, to: ['auth.roles.list', 'auth.acl.manage'] });

      const undone = await undo(m.auth, token).expect(200);
      expect(await userAcl(target.id)).toBeNull();
      const acl = await request(spec.t.url).get('/auth/users/acl').set(m.auth).query({ userId: target.id }).expect(200);
      expect(acl.body).toMatchObject({ hasCustomAcl: false });

      const redone = await redo(m.auth, undone.body.logId).expect(200);
      expect(redone.body.undoToken).toEqual(expect.any(String));
      const back = await userAcl(target.id);
      expect({ ...back, id: undefined, created_at: undefined }).toEqual({ ...after, id: undefined, created_at: undefined });
    });

    it('changing an ACL (sanitized, features in stored order) and removing one: each undo restores the prior row exactly', async () => {
      const m = await manager();
      const target = await spec.f.user(m.tenant);
      await spec.ds.query('INSERT INTO user_acls (tenant_id, user_id, features, organizations) VALUES ($1, $2, $3, NULL)', [
        m.tenant.id,
        target.id,
        ['auth.users.list', 'auth.roles.list'],
      ]);
      const original = await userAcl(target.id);

      // billing.view is beyond the caller: dropped, sanitized, and the write is still undoable.
      const changed = await request(spec.t.url)
        .put('/auth/users/acl')
        .set(m.auth)
        .send({ userId: target.id, features: ['auth.acl.manage', 'billing.view'] })
        .expect(200);
      expect(changed.body).toEqual({ ok: true, sanitized: true });
      expect((await userAcl(target.id)).features).toEqual(['auth.acl.manage']);
      expect((await lastEntry(m.user.id)).changes).toEqual({
        features: { from: ['auth.users.list', 'auth.roles.list'], to: ['auth.acl.manage'] },
      });
      await undo(m.auth, changed.headers['x-undo-token']).expect(200);
      expect(await userAcl(target.id)).toEqual(original);

      // features: [] removes the ACL; its undo puts the same values back.
      const emptied = await request(spec.t.url).put('/auth/users/acl').set(m.auth).send({ userId: target.id, features: [] }).expect(200);
      expect(await userAcl(target.id)).toBeNull();
      await undo(m.auth, emptied.headers['x-undo-token']).expect(200);
      expect({ ...(await userAcl(target.id)), id: undefined, created_at: undefined }).toEqual({
        ...original,
        id: undefined,
        created_at: undefined,
      });
    });
  });
});
