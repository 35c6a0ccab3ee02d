import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { login, testIp } from './support/factories.js';
import { commandSpecApp } from './support/undo-redo.js';

const MANAGER = ['auth.*', 'crm.*', 'audit_logs.*'];
const SHA256_HEX = /^[0-9a-f]{64}$/;

describe('commands: POST/PUT/DELETE /auth/users and POST /auth/users/consents', () => {
  const spec = commandSpecApp(MANAGER);
  const { manager, undo, redo, lastEntry } = spec;
  const userRow = async (id: string) =>
    (
      await spec.ds.query(
        'SELECT id, tenant_id, organization_id, email, name, password_hash, created_at, deleted_at FROM users WHERE id = $1',
        [id],
      )
    )[0];
  const roleIdsOf = async (userId: string) =>
    (await spec.ds.query('SELECT role_id FROM user_roles WHERE user_id = $1 ORDER BY role_id', [userId])).map(
      (r: { role_id: string }) => r.role_id,
    );
  const userAcl = async (userId: string) =>
    (await spec.ds.query('SELECT is_super_admin, features, organizations FROM user_acls WHERE user_id = $1', [userId]))[0] ?? null;
  const sessionsOf = async (userId: string) => (await spec.ds.query('SELECT id FROM sessions WHERE user_id = $1', [userId])).length;
  const loginStatus = async (email: string, password: string) =>
    (await request(spec.t.url).post('/auth/login').set('X-Forwarded-For', testIp()).type('form').send({ email, password })).status;
  const email = () => `cmd-${randomUUID().slice(0, 8)}@example.com`;

  describe('POST /auth/users (auth.users.create)', () => {
    it('X-Undo-Token; undo removes the user (soft delete: roles, sessions gone); redo brings back the same user, password and roles', async () => {
      const m = await manager();
      const crm = await spec.f.role(m.tenant.id, { features: ['crm.contacts.view'] });
      const address = email();
      const res = await request(spec.t.url)
        .post('/auth/users')
        .set(m.auth)
        .send({ email: address, password: 'secret-pass-1', name: 'Created', roleIds: [crm.id] })
        .expect(201);
      expect(res.body).toEqual({ id: expect.any(String) });
      const token = res.headers['x-undo-token'];
      expect(token).toEqual(expect.any(String));
      const id = res.body.id;
      const created = await userRow(id);

      const entry = await lastEntry(m.user.id);
      expect(entry).toMatchObject({
        command_id: 'auth.users.create',
        action_type: 'create',
        resource_kind: 'auth.user',
        resource_id: id,
        undo_token: token,
        snapshot_before: null,
        snapshot_after: {
          id,
          tenantId: m.tenant.id,
          organizationId: m.tenant.organizationId,
          email: address,
          name: 'Created',
          hasPassword: true,
          passwordVersion: expect.stringMatching(SHA256_HEX),
          roles: [crm.id],
          acl: null,
        },
      });
      expect(entry.snapshot_after).not.toHaveProperty('passwordHash');
      expect(entry.changes.email).toEqual({ from: null, to: address });
      const session = await login(spec.t, address, 'secret-pass-1');

      const undone = await undo(m.auth, token).expect(200);
      const removed = await userRow(id);
      expect(removed.deleted_at).not.toBeNull();
      expect(await roleIdsOf(id)).toEqual([]);
      expect(await sessionsOf(id)).toBe(0);
      await request(spec.t.url).get('/auth/profile').set('Authorization', `Bearer ${session}`).expect(401);
      expect(await loginStatus(address, 'secret-pass-1')).toBe(401);
      const listed = await request(spec.t.url).get('/auth/users').set(m.auth).query({ id }).expect(200);
      expect(listed.body.items).toEqual([]);

      const redone = await redo(m.auth, undone.body.logId).expect(200);
      expect(redone.body.undoToken).toEqual(expect.any(String));
      expect(await userRow(id)).toEqual({ ...created, deleted_at: null });
      expect(await roleIdsOf(id)).toEqual([crm.id]);
      expect(await loginStatus(address, 'secret-pass-1')).toBe(200);
    });

    it('an invited user: undo voids the setup token (the email already sent is not recalled)', async () => {
      const m = await manager();
      const res = await request(spec.t.url).post('/auth/users').set(m.auth).send({ email: email() }).expect(201);
      const tokens = () => spec.ds.query('SELECT used_at FROM auth_tokens WHERE user_id = $1', [res.body.id]);
      expect(await tokens()).toEqual([{ used_at: null }]);
      expect((await lastEntry(m.user.id)).snapshot_after).toMatchObject({ hasPassword: false, passwordVersion: null });
      await undo(m.auth, res.headers['x-undo-token']).expect(200);
      expect((await tokens())[0].used_at).not.toBeNull();
    });

    it('redo refuses (409) when the email was taken meanwhile, and changes nothing', async () => {
      const m = await manager();
      const address = email();
      const res = await request(spec.t.url).post('/auth/users').set(m.auth).send({ email: address, password: 'secret-pass-1' }).expect(201);
      const undone = await undo(m.auth, res.headers['x-undo-token']).expect(200);
      await spec.f.user(m.tenant, { email: address });
      await redo(m.auth, undone.body.logId).expect(409);
      expect((await userRow(res.body.id)).deleted_at).not.toBeNull();
    });
  });

  describe('PUT /auth/users (auth.users.update)', () => {
    it('undo restores email, name, organization and roles exactly (the role change reaches the live session); redo re-applies', async () => {
      const m = await manager();
      const crm = await spec.f.role(m.tenant.id, { features: ['crm.contacts.view'] });
      const deals = await spec.f.role(m.tenant.id, { features: ['crm.deals.view'] });
      const [otherOrg] = await spec.ds.query('INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, $2, $3) RETURNING id', [
        m.tenant.id,
        'Second',
        `org-${randomUUID().slice(0, 8)}`,
      ]);
      const target = await spec.f.user(m.tenant, { name: 'Before', roleIds: [crm.id] });
      const targetAuth = { Authorization: `Bearer ${await login(spec.t, target.email, target.password)}` };
      const granted = async () =>
        (
          await request(spec.t.url)
            .post('/auth/feature-check')
            .set(targetAuth)
            .send({ features: ['crm.contacts.view', 'crm.deals.view'] })
            .expect(200)
        ).body.granted;
      expect(await granted()).toEqual(['crm.contacts.view']);
      const before = await userRow(target.id);

      const newEmail = email();
      const res = await request(spec.t.url)
        .put('/auth/users')
        .set(m.auth)
        .send({ id: target.id, email: newEmail, name: 'After', organizationId: otherOrg.id, roleIds: [deals.id] })
        .expect(200);
      expect(res.body).toEqual({ ok: true });
      const token = res.headers['x-undo-token'];
      expect(token).toEqual(expect.any(String));
      const after = await userRow(target.id);
      expect(await granted()).toEqual(['crm.deals.view']);

      const entry = await lastEntry(m.user.id);
      expect(entry).toMatchObject({
        command_id: 'auth.users.update',
        action_type: 'edit',
        resource_kind: 'auth.user',
        resource_id: target.id,
      });
      expect(entry.changes).toEqual({
        email: { from: target.email, to: newEmail },
        name: { from: 'Before', to: 'After' },
        organizationId: { from: m.tenant.organizationId, to: otherOrg.id },
        roles: { from: [crm.id], to: [deals.id] },
      });
      expect([...entry.changed_fields].sort()).toEqual(['email', 'name', 'organizationId', 'roles']);

      const undone = await undo(m.auth, token).expect(200);
      expect(await userRow(target.id)).toEqual(before); // password hash included: untouched
      expect(await roleIdsOf(target.id)).toEqual([crm.id]);
      expect(await granted()).toEqual(['crm.contacts.view']);

      await redo(m.auth, undone.body.logId).expect(200);
      expect(await userRow(target.id)).toEqual(after);
      expect(await roleIdsOf(target.id)).toEqual([deals.id]);
      expect(await granted()).toEqual(['crm.deals.view']);
    });

    it('a password change is logged without the hash and without an undo token; an earlier edit can no longer be undone', async () => {
      const m = await manager();
      const crm = await spec.f.role(m.tenant.id, { features: ['crm.contacts.view'] });
      const target = await spec.f.user(m.tenant, { name: 'Old name', roleIds: [crm.id] });
      await login(spec.t, target.email, target.password);
      const hashBefore = (await userRow(target.id)).password_hash;

      const renamed = await request(spec.t.url).put('/auth/users').set(m.auth).send({ id: target.id, name: 'New name' }).expect(200);
      const renameToken = renamed.headers['x-undo-token'];
      expect(renameToken).toEqual(expect.any(String));

      const changed = await request(spec.t.url)
        .put('/auth/users')
        .set(m.auth)
        .send({ id: target.id, password: 'another-pass-2' })
        .expect(200);
      expect(changed.body).toEqual({ ok: true });
      expect(changed.headers['x-undo-token']).toBeUndefined();
      expect(await sessionsOf(target.id)).toBe(0); // revocation after commit, as before
      const hashAfter = (await userRow(target.id)).password_hash;

      const entry = await lastEntry(m.user.id);
      expect(entry).toMatchObject({
        command_id: 'auth.users.password.update',
        action_type: 'edit',
        resource_kind: 'auth.user',
        resource_id: target.id,
        undo_token: null,
        changed_fields: ['passwordVersion'],
      });
      expect(entry.changes.passwordVersion.from).toMatch(SHA256_HEX);
      expect(entry.changes.passwordVersion.to).toMatch(SHA256_HEX);
      expect(entry.changes.passwordVersion.from).not.toBe(entry.changes.passwordVersion.to);
      const logged = JSON.stringify(entry);
      expect(logged).not.toContain(hashBefore);
      expect(logged).not.toContain(hashAfter);

      // The rename is still the caller's latest undoable entry, but the user changed since (password).
      await undo(m.auth, renameToken).expect(400);
      expect((await userRow(target.id)).name).toBe('New name');

      // Nor does the audit API show a hash.
      const listed = await request(spec.t.url).get('/audit_logs/audit-logs/actions').set(m.auth).query({ pageSize: 50 }).expect(200);
      expect(JSON.stringify(listed.body)).not.toContain('argon2');
    });

    it('refused edits (404, 409) record nothing', async () => {
      const m = await manager();
      const a = await spec.f.user(m.tenant);
      const b = await spec.f.user(m.tenant);
      await request(spec.t.url).put('/auth/users').set(m.auth).send({ id: randomUUID(), name: 'x' }).expect(404);
      await request(spec.t.url).put('/auth/users').set(m.auth).send({ id: a.id, email: b.email }).expect(409);
      expect(await lastEntry(m.user.id)).toBeUndefined();
    });
  });

  describe('DELETE /auth/users (auth.users.delete)', () => {
    it('undo brings the user back with its roles and ACL (its sessions stay ended); redo deletes it again', async () => {
      const m = await manager();
      const crm = await spec.f.role(m.tenant.id, { features: ['crm.contacts.view'] });
      const target = await spec.f.user(m.tenant, { name: 'Deleted', roleIds: [crm.id] });
      await spec.ds.query('INSERT INTO user_acls (tenant_id, user_id, features) VALUES ($1, $2, $3)', [
        m.tenant.id,
        target.id,
        ['crm.deals.view'],
      ]);
      const session = await login(spec.t, target.email, target.password);
      const before = await userRow(target.id);

      const res = await request(spec.t.url).delete('/auth/users').set(m.auth).query({ id: target.id }).expect(200);
      expect(res.body).toEqual({ ok: true });
      const token = res.headers['x-undo-token'];
      expect(token).toEqual(expect.any(String));
      const entry = await lastEntry(m.user.id);
      expect(entry).toMatchObject({
        command_id: 'auth.users.delete',
        action_type: 'delete',
        resource_kind: 'auth.user',
        resource_id: target.id,
        snapshot_after: null,
        snapshot_before: {
          id: target.id,
          name: 'Deleted',
          roles: [crm.id],
          acl: { isSuperAdmin: false, features: ['crm.deals.view'], organizations: null },
        },
      });
      expect(entry.changes.name).toEqual({ from: 'Deleted', to: null });

      const undone = await undo(m.auth, token).expect(200);
      expect(await userRow(target.id)).toEqual(before);
      expect(await roleIdsOf(target.id)).toEqual([crm.id]);
      expect(await userAcl(target.id)).toEqual({ is_super_admin: false, features: ['crm.deals.view'], organizations: null });
      // Sessions are not brought back: the old token stays dead, a new login works.
      await request(spec.t.url).get('/auth/profile').set('Authorization', `Bearer ${session}`).expect(401);
      await login(spec.t, target.email, target.password);

      await redo(m.auth, undone.body.logId).expect(200);
      expect((await userRow(target.id)).deleted_at).not.toBeNull();
      expect(await roleIdsOf(target.id)).toEqual([]);
      expect(await userAcl(target.id)).toBeNull();
      expect(await sessionsOf(target.id)).toBe(0);
      expect(await loginStatus(target.email, target.password)).toBe(401);
    });
  });

  describe('POST /auth/users/consents (auth.users.consents.create)', () => {
    it('is logged as a child of the user, without an undo token (append-only)', async () => {
      const m = await manager();
      const target = await spec.f.user(m.tenant);
      const res = await request(spec.t.url)
        .post('/auth/users/consents')
        .set(m.auth)
        .send({ userId: target.id, consentType: 'marketing', isGranted: true, source: 'form' })
        .expect(201);
      expect(res.headers['x-undo-token']).toBeUndefined();
      expect(res.body).toMatchObject({ userId: target.id, consentType: 'marketing', isGranted: true, integrityValid: true });
      expect(await lastEntry(m.user.id)).toMatchObject({
        command_id: 'auth.users.consents.create',
        action_type: 'create',
        resource_kind: 'auth.user_consent',
        resource_id: res.body.id,
        parent_resource_kind: 'auth.user',
        parent_resource_id: target.id,
        undo_token: null,
        snapshot_before: null,
        snapshot_after: {
          id: res.body.id,
          userId: target.id,
          consentType: 'marketing',
          isGranted: true,
          source: 'form',
          withdrawnAt: null,
        },
      });
    });
  });

  // Runs last (tests of a file run in order): covers every entry the tests above wrote.
  it('no password hash reached the action log, in any snapshot, change or context', async () => {
    const [entries] = await spec.ds.query('SELECT count(*)::int AS n FROM action_logs WHERE resource_kind = $1', ['auth.user']);
    expect(entries.n).toBeGreaterThan(5);
    const [leaks] = await spec.ds.query(
      `SELECT count(*)::int AS n FROM action_logs
        WHERE snapshot_before::text LIKE '%argon2%' OR snapshot_after::text LIKE '%argon2%'
           OR changes::text LIKE '%argon2%' OR context::text LIKE '%argon2%'`,
    );
    expect(leaks.n).toBe(0);
  });
});
