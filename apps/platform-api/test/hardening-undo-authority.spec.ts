import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AccessCacheService } from '../src/core/auth/access-cache.service.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { undoRedoClient, type AuthHeaders } from './support/undo-redo.js';

const AUDIT = ['audit_logs.*'];

/**
 * Issue #11 item 6: an undo or a redo is a new write. It needs, at that time, the features of the
 * command it reverts or replays, and stays within the grant boundary, against the caller's current ACL.
 * A refused undo or redo changes nothing and leaves the entry as it was.
 */
describe('undo and redo re-check the caller’s authority', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  const undo = (auth: AuthHeaders, token: string) => undoRedoClient(t).undo(auth, token);
  const redo = (auth: AuthHeaders, logId: string) => undoRedoClient(t).redo(auth, logId);
  const lastEntry = (actorId: string) => undoRedoClient(t).lastEntry(actorId);
  const entry = async (id: string) => (await ds.query('SELECT execution_state, undo_token FROM action_logs WHERE id = $1', [id]))[0];
  const roleFeatures = async (roleId: string) =>
    (await ds.query('SELECT features FROM role_acls WHERE role_id = $1', [roleId]))[0]?.features ?? null;
  const userAcl = async (userId: string) =>
    (await ds.query('SELECT features, organizations FROM user_acls WHERE user_id = $1', [userId]))[0] ?? null;

  /** The administrator's own role now grants exactly `features` (as an administrator of its tenant would set it). */
  async function setOwnFeatures(roleId: string, features: string[]) {
    await ds.query('UPDATE role_acls SET features = $2 WHERE role_id = $1', [roleId, features]);
    await t.app.get(AccessCacheService).invalidateAcls();
  }

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('the command’s features', () => {
    it('a role ACL write: undo and redo are 403 once the caller lost auth.acl.manage, and work again when it has it back', async () => {
      const full = ['auth.acl.manage', 'auth.roles.list', ...AUDIT];
      const admin = await f.loggedInUser(t, { features: full });
      const role = await f.role(admin.tenant.id, { features: [] });
      const res = await request(t.url)
        .put('/auth/roles/acl')
        .set(admin.auth)
        .send({ roleId: role.id, features: ['auth.roles.list'] })
        .expect(200);
      const token = res.headers['x-undo-token'];
      const { id } = await lastEntry(admin.user.id);

      await setOwnFeatures(admin.role.id, ['auth.roles.list', ...AUDIT]);
      const denied = await undo(admin.auth, token).expect(403);
      expect(denied.body).toEqual({ error: expect.stringContaining('auth.acl.manage') });
      expect(await entry(id)).toEqual({ execution_state: 'done', undo_token: token });
      expect(await roleFeatures(role.id)).toEqual(['auth.roles.list']);

      await setOwnFeatures(admin.role.id, full);
      await undo(admin.auth, token).expect(200);
      expect(await roleFeatures(role.id)).toEqual([]);

      await setOwnFeatures(admin.role.id, ['auth.roles.list', ...AUDIT]);
      expect((await redo(admin.auth, id).expect(403)).body).toEqual({ error: expect.stringContaining('auth.acl.manage') });
      expect(await entry(id)).toEqual({ execution_state: 'undone', undo_token: null });
      expect(await roleFeatures(role.id)).toEqual([]);
    });

    it('a role create: undo is 403 without auth.roles.manage, and the role stays', async () => {
      const admin = await f.loggedInUser(t, { features: ['auth.roles.*', ...AUDIT] });
      const res = await request(t.url).post('/auth/roles').set(admin.auth).send({ name: 'kept' }).expect(201);
      await setOwnFeatures(admin.role.id, ['auth.roles.list', ...AUDIT]);
      expect((await undo(admin.auth, res.headers['x-undo-token']).expect(403)).body).toEqual({
        error: expect.stringContaining('auth.roles.manage'),
      });
      expect(await ds.query('SELECT name FROM roles WHERE id = $1', [res.body.id])).toEqual([{ name: 'kept' }]);
    });

    it('a user create: undo is 403 without auth.users.create, and the user stays', async () => {
      const admin = await f.loggedInUser(t, { features: ['auth.users.*', ...AUDIT] });
      const res = await request(t.url)
        .post('/auth/users')
        .set(admin.auth)
        .send({ email: `kept-${Date.now()}@example.com`, password: 'secret-pass-1' })
        .expect(201);
      await setOwnFeatures(admin.role.id, ['auth.users.list', 'auth.users.edit', 'auth.users.delete', ...AUDIT]);
      expect((await undo(admin.auth, res.headers['x-undo-token']).expect(403)).body).toEqual({
        error: expect.stringContaining('auth.users.create'),
      });
      expect(await ds.query('SELECT deleted_at FROM users WHERE id = $1', [res.body.id])).toEqual([{ deleted_at: null }]);
    });
  });

  describe('the grant boundary', () => {
    it('undoing a role ACL write that would give back a feature the caller no longer holds is 403', async () => {
      const admin = await f.loggedInUser(t, { features: ['auth.acl.manage', 'crm.view', 'crm.edit', ...AUDIT] });
      const role = await f.role(admin.tenant.id, { features: ['crm.view', 'crm.edit'] });
      const res = await request(t.url)
        .put('/auth/roles/acl')
        .set(admin.auth)
        .send({ roleId: role.id, features: ['crm.view'] })
        .expect(200);
      await setOwnFeatures(admin.role.id, ['auth.acl.manage', 'crm.view', ...AUDIT]);
      expect((await undo(admin.auth, res.headers['x-undo-token']).expect(403)).body).toEqual({ error: expect.any(String) });
      expect(await roleFeatures(role.id)).toEqual(['crm.view']);
      // Holding the feature again, the same undo goes through.
      await setOwnFeatures(admin.role.id, ['auth.acl.manage', 'crm.view', 'crm.edit', ...AUDIT]);
      await undo(admin.auth, res.headers['x-undo-token']).expect(200);
      expect(await roleFeatures(role.id)).toEqual(['crm.view', 'crm.edit']);
    });

    it('redoing a user ACL write that grants a feature the caller no longer holds is 403', async () => {
      const admin = await f.loggedInUser(t, { features: ['auth.acl.manage', 'crm.view', 'crm.edit', ...AUDIT] });
      const target = await f.user(admin.tenant);
      const res = await request(t.url)
        .put('/auth/users/acl')
        .set(admin.auth)
        .send({ userId: target.id, features: ['crm.view', 'crm.edit'] })
        .expect(200);
      const undone = await undo(admin.auth, res.headers['x-undo-token']).expect(200);
      expect(await userAcl(target.id)).toBeNull();
      await setOwnFeatures(admin.role.id, ['auth.acl.manage', 'crm.view', ...AUDIT]);
      expect((await redo(admin.auth, undone.body.logId).expect(403)).body).toEqual({ error: expect.any(String) });
      expect(await userAcl(target.id)).toBeNull();
      expect(await entry(undone.body.logId)).toEqual({ execution_state: 'undone', undo_token: null });
    });

    it('undoing a user ACL write of a user now outside the caller’s organizations is 404', async () => {
      const tenant = await f.tenant();
      const [{ id: orgB }] = await ds.query(
        `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'B', 'org-' || gen_random_uuid()) RETURNING id`,
        [tenant.id],
      );
      const admin = await f.loggedInUser(
        t,
        { features: ['auth.acl.manage', 'crm.view', ...AUDIT], organizations: [tenant.organizationId] },
        tenant,
      );
      const target = await f.user(tenant);
      const res = await request(t.url)
        .put('/auth/users/acl')
        .set(admin.auth)
        .send({ userId: target.id, features: ['crm.view'] })
        .expect(200);
      await ds.query('UPDATE users SET organization_id = $2 WHERE id = $1', [target.id, orgB]);
      expect((await undo(admin.auth, res.headers['x-undo-token']).expect(404)).body).toEqual({ error: 'user not found' });
      expect(await userAcl(target.id)).toEqual({ features: ['crm.view'], organizations: [tenant.organizationId] });
    });

    it('undoing a role delete that would bring back a feature the caller no longer holds is 403', async () => {
      const admin = await f.loggedInUser(t, { features: ['auth.roles.*', 'crm.edit', ...AUDIT] });
      const role = await f.role(admin.tenant.id, { features: ['crm.edit'] });
      const res = await request(t.url).delete('/auth/roles').set(admin.auth).query({ id: role.id }).expect(200);
      await setOwnFeatures(admin.role.id, ['auth.roles.*', ...AUDIT]);
      await undo(admin.auth, res.headers['x-undo-token']).expect(403);
      expect(await ds.query('SELECT 1 FROM roles WHERE id = $1', [role.id])).toEqual([]);
    });
  });
});
