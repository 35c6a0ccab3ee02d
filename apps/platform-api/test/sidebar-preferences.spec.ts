import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const EMPTY = { version: 2, groupOrder: [], groupLabels: {}, itemLabels: {}, hiddenItems: [], itemOrder: {} };
const MANAGE = ['auth.sidebar.manage'];
type Auth = { Authorization: string };

describe('sidebar preferences', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenant: { id: string; organizationId: string };
  let manager: { auth: Auth; user: { id: string }; role: { id: string; name: string } };
  let plain: { auth: Auth; user: { id: string }; role: { id: string; name: string } };
  let editor: { id: string; name: string };
  let global: { id: string; name: string };
  let foreign: { id: string; name: string };
  let otherTenant: { id: string; organizationId: string };

  const setLocale = (userId: string, locale: string | null) => ds.query('UPDATE users SET locale = $2 WHERE id = $1', [userId, locale]);
  const put = (auth: Auth, body: object) => request(t.url).put('/auth/sidebar/preferences').set(auth).send(body);
  const getPrefs = (auth: Auth, roleId?: string) =>
    request(t.url)
      .get(`/auth/sidebar/preferences${roleId === undefined ? '' : `?roleId=${roleId}`}`)
      .set(auth);
  const roleEntry = (body: { roles: { id: string; hasPreference: boolean }[] }, id: string) => body.roles.find((r) => r.id === id);

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenant = await f.tenant();
    otherTenant = await f.tenant();
    manager = await f.loggedInUser(t, { features: MANAGE }, tenant);
    plain = await f.loggedInUser(t, { features: ['auth.roles.list'] }, tenant);
    editor = await f.role(tenant.id, {}, { name: `editor-${randomUUID().slice(0, 6)}` });
    global = await f.role(null, {}, { name: `global-${randomUUID().slice(0, 6)}` });
    foreign = await f.role(otherTenant.id, {}, { name: `foreign-${randomUUID().slice(0, 6)}` });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /auth/sidebar/preferences', () => {
    it('401 without a token', async () => {
      await request(t.url).get('/auth/sidebar/preferences').expect(401, { error: 'unauthorized' });
    });

    it('user scope by default: empty normalized settings, no roles without auth.sidebar.manage', async () => {
      const res = await getPrefs(plain.auth).expect(200);
      expect(res.body).toEqual({ locale: 'en', settings: EMPTY, canApplyToRoles: false, roles: [], scope: { type: 'user' } });
    });

    it('for a manager: canApplyToRoles and the tenant’s and global roles, never another tenant’s', async () => {
      const res = await getPrefs(manager.auth).expect(200);
      expect(res.body.canApplyToRoles).toBe(true);
      const ids = res.body.roles.map((r: { id: string }) => r.id);
      expect(ids).toEqual(expect.arrayContaining([editor.id, global.id, manager.role.id, plain.role.id]));
      expect(ids).not.toContain(foreign.id);
      expect(roleEntry(res.body, editor.id)).toEqual({ id: editor.id, name: editor.name, hasPreference: false });
    });

    it('role scope needs auth.sidebar.manage: 403', async () => {
      const res = await getPrefs(plain.auth, editor.id).expect(403);
      expect(res.body).toEqual({ error: expect.stringContaining('auth.sidebar.manage') });
    });

    it('role scope: 404 for an unknown role or another tenant’s role, 400 for a malformed id', async () => {
      await getPrefs(manager.auth, randomUUID()).expect(404, { error: 'role not found' });
      await getPrefs(manager.auth, foreign.id).expect(404, { error: 'role not found' });
      const malformed = await getPrefs(manager.auth, 'not-a-uuid').expect(400);
      expect(malformed.body).toEqual({ error: 'roleId must be a UUID' });
    });

    it('role scope: a super administrator also gets 404 for another tenant’s role', async () => {
      const admin = await f.loggedInUser(t, { isSuperAdmin: true }, tenant);
      await getPrefs(admin.auth, foreign.id).expect(404);
    });

    it('role scope: a global role is in reach, with empty settings when it has none', async () => {
      const res = await getPrefs(manager.auth, global.id).expect(200);
      expect(res.body).toMatchObject({ settings: EMPTY, scope: { type: 'role', roleId: global.id }, canApplyToRoles: true });
    });
  });

  describe('PUT /auth/sidebar/preferences', () => {
    it('403 without auth.sidebar.manage, 401 without a token', async () => {
      const res = await put(plain.auth, { settings: {} }).expect(403);
      expect(res.body).toEqual({ error: expect.stringContaining('auth.sidebar.manage') });
      await request(t.url).put('/auth/sidebar/preferences').send({ settings: {} }).expect(401);
    });

    it('400 for an invalid body', async () => {
      for (const body of [
        {},
        { settings: 'x' },
        { settings: [] },
        { settings: null },
        { settings: {}, applyToRoles: ['nope'] },
        { settings: {}, clearRoleIds: 'x' },
        { settings: {}, scope: { type: 'team' } },
        { settings: {}, scope: { type: 'role' } },
        { settings: {}, scope: { type: 'role', roleId: 'x' } },
      ]) {
        const res = await put(manager.auth, body);
        expect([res.status, body]).toEqual([400, body]);
        expect(res.body.error).toEqual(expect.any(String));
      }
    });

    it('user scope: saves the normalized settings for the caller, read back by GET', async () => {
      const user = await f.loggedInUser(t, { features: MANAGE }, tenant);
      const res = await put(user.auth, {
        settings: {
          version: 1,
          groupOrder: [' b', 'a', 'b', 3],
          hiddenItems: ['/x', '/x'],
          itemOrder: { g: [] },
          groupLabels: { a: ' A ' },
          junk: 1,
        },
      }).expect(200);
      const expected = { ...EMPTY, groupOrder: ['b', 'a'], hiddenItems: ['/x'], groupLabels: { a: 'A' } };
      expect(res.body).toMatchObject({
        locale: 'en',
        settings: expected,
        canApplyToRoles: true,
        scope: { type: 'user' },
        appliedRoles: [],
        clearedRoles: [],
      });
      expect((await getPrefs(user.auth).expect(200)).body.settings).toEqual(expected);
      // Another user of the same tenant is not affected.
      expect((await getPrefs(plain.auth).expect(200)).body.settings).toEqual(EMPTY);
    });

    it('keeps preferences per locale (the caller’s stored locale)', async () => {
      const user = await f.loggedInUser(t, { features: MANAGE }, tenant);
      await put(user.auth, { settings: { groupOrder: ['en-order'] } }).expect(200);
      await setLocale(user.user.id, 'de');
      const de = await getPrefs(user.auth).expect(200);
      expect(de.body).toMatchObject({ locale: 'de', settings: EMPTY });
      await put(user.auth, { settings: { groupOrder: ['de-order'] } }).expect(200);
      await setLocale(user.user.id, null);
      const en = await getPrefs(user.auth).expect(200);
      expect(en.body).toMatchObject({ locale: 'en', settings: { groupOrder: ['en-order'] } });
    });

    it('rule 2: applyToRoles saves the same settings for those roles; clearRoleIds removes theirs', async () => {
      const settings = { hiddenItems: ['/backend/users'] };
      const applied = await put(manager.auth, { settings, applyToRoles: [editor.id, global.id] }).expect(200);
      expect(applied.body.appliedRoles).toEqual([editor.id, global.id]);
      expect(applied.body.clearedRoles).toEqual([]);
      expect(roleEntry(applied.body, editor.id)?.hasPreference).toBe(true);
      expect(roleEntry(applied.body, global.id)?.hasPreference).toBe(true);
      const editorPrefs = await getPrefs(manager.auth, editor.id).expect(200);
      expect(editorPrefs.body).toMatchObject({
        settings: { ...EMPTY, hiddenItems: ['/backend/users'] },
        scope: { type: 'role', roleId: editor.id },
      });

      const cleared = await put(manager.auth, { settings, clearRoleIds: [editor.id] }).expect(200);
      expect(cleared.body.clearedRoles).toEqual([editor.id]);
      expect(roleEntry(cleared.body, editor.id)?.hasPreference).toBe(false);
      expect(roleEntry(cleared.body, global.id)?.hasPreference).toBe(true);
      expect((await getPrefs(manager.auth, editor.id).expect(200)).body.settings).toEqual(EMPTY);
    });

    it('a role both applied and cleared is applied', async () => {
      const role = await f.role(tenant.id);
      const res = await put(manager.auth, { settings: { groupOrder: ['x'] }, applyToRoles: [role.id], clearRoleIds: [role.id] }).expect(
        200,
      );
      expect(res.body.appliedRoles).toEqual([role.id]);
      expect(res.body.clearedRoles).toEqual([]);
      expect((await getPrefs(manager.auth, role.id).expect(200)).body.settings.groupOrder).toEqual(['x']);
    });

    it('404 for an unknown or another tenant’s role in applyToRoles or clearRoleIds, and nothing is written', async () => {
      const user = await f.loggedInUser(t, { features: MANAGE }, tenant);
      await put(user.auth, { settings: { groupOrder: ['before'] } }).expect(200);
      await put(user.auth, { settings: { groupOrder: ['after'] }, applyToRoles: [editor.id, foreign.id] }).expect(404);
      await put(user.auth, { settings: { groupOrder: ['after'] }, clearRoleIds: [randomUUID()] }).expect(404);
      expect((await getPrefs(user.auth).expect(200)).body.settings.groupOrder).toEqual(['before']);
      const [{ count }] = await ds.query(`SELECT count(*)::int AS count FROM sidebar_preferences WHERE role_id = $1`, [foreign.id]);
      expect(count).toBe(0);
    });

    it('rule 1: in role scope applyToRoles and clearRoleIds are rejected with 400', async () => {
      const withApply = await put(manager.auth, {
        scope: { type: 'role', roleId: editor.id },
        settings: {},
        applyToRoles: [global.id],
      }).expect(400);
      expect(withApply.body).toEqual({ error: 'applyToRoles and clearRoleIds are not accepted in role scope' });
      await put(manager.auth, { scope: { type: 'role', roleId: editor.id }, settings: {}, clearRoleIds: [global.id] }).expect(400);
      // Empty lists carry nothing to reject.
      await put(manager.auth, { scope: { type: 'role', roleId: editor.id }, settings: {}, applyToRoles: [], clearRoleIds: [] }).expect(200);
    });

    it('role scope: saves the role’s preferences only', async () => {
      const role = await f.role(tenant.id);
      const user = await f.loggedInUser(t, { features: MANAGE }, tenant);
      const res = await put(user.auth, {
        scope: { type: 'role', roleId: role.id },
        settings: { itemLabels: { '/backend/roles': ' Groups ' } },
      }).expect(200);
      expect(res.body).toMatchObject({
        locale: 'en',
        settings: { ...EMPTY, itemLabels: { '/backend/roles': 'Groups' } },
        scope: { type: 'role', roleId: role.id },
        appliedRoles: [],
        clearedRoles: [],
        canApplyToRoles: true,
      });
      expect(roleEntry(res.body, role.id)?.hasPreference).toBe(true);
      expect((await getPrefs(user.auth).expect(200)).body.settings).toEqual(EMPTY);
      expect((await getPrefs(user.auth, role.id).expect(200)).body.settings.itemLabels).toEqual({ '/backend/roles': 'Groups' });
    });

    it('role scope: 404 for an unknown or another tenant’s role', async () => {
      await put(manager.auth, { scope: { type: 'role', roleId: foreign.id }, settings: {} }).expect(404, { error: 'role not found' });
      await put(manager.auth, { scope: { type: 'role', roleId: randomUUID() }, settings: {} }).expect(404);
    });

    it('tenant isolation: a global role’s preference in one tenant is invisible from another', async () => {
      const role = await f.role(null);
      await put(manager.auth, { settings: { groupOrder: ['a'] }, applyToRoles: [role.id] }).expect(200);
      const outsider = await f.loggedInUser(t, { features: MANAGE }, otherTenant);
      const res = await getPrefs(outsider.auth).expect(200);
      expect(roleEntry(res.body, role.id)).toEqual({ id: role.id, name: role.name, hasPreference: false });
      expect(res.body.roles.map((r: { id: string }) => r.id)).not.toContain(editor.id);
      expect((await getPrefs(outsider.auth, role.id).expect(200)).body.settings).toEqual(EMPTY);
      await getPrefs(outsider.auth, editor.id).expect(404);
    });
  });

  describe('DELETE /auth/sidebar/preferences', () => {
    const del = (auth: Auth, query: string) => request(t.url).delete(`/auth/sidebar/preferences${query}`).set(auth);

    it('removes the role’s preferences for the tenant and locale; idempotent', async () => {
      const role = await f.role(tenant.id);
      await put(manager.auth, { scope: { type: 'role', roleId: role.id }, settings: { groupOrder: ['a'] } }).expect(200);
      const res = await del(manager.auth, `?roleId=${role.id}`).expect(200);
      expect(res.body).toEqual({ ok: true, scope: { type: 'role', roleId: role.id } });
      expect((await getPrefs(manager.auth, role.id).expect(200)).body.settings).toEqual(EMPTY);
      await del(manager.auth, `?roleId=${role.id}`).expect(200, { ok: true, scope: { type: 'role', roleId: role.id } });
    });

    it('leaves the role’s preferences of other locales', async () => {
      const role = await f.role(tenant.id);
      const user = await f.loggedInUser(t, { features: MANAGE }, tenant);
      await put(user.auth, { scope: { type: 'role', roleId: role.id }, settings: { groupOrder: ['en'] } }).expect(200);
      await setLocale(user.user.id, 'fr');
      await put(user.auth, { scope: { type: 'role', roleId: role.id }, settings: { groupOrder: ['fr'] } }).expect(200);
      await del(user.auth, `?roleId=${role.id}`).expect(200);
      expect((await getPrefs(user.auth, role.id).expect(200)).body.settings).toEqual(EMPTY);
      await setLocale(user.user.id, 'en');
      expect((await getPrefs(user.auth, role.id).expect(200)).body.settings.groupOrder).toEqual(['en']);
    });

    it('400 for a missing or malformed roleId', async () => {
      const missing = await del(manager.auth, '').expect(400);
      expect(missing.body.error).toMatch(/roleId/);
      await del(manager.auth, '?roleId=abc').expect(400);
    });

    it('403 without auth.sidebar.manage, 401 without a token', async () => {
      await del(plain.auth, `?roleId=${editor.id}`).expect(403);
      await request(t.url).delete(`/auth/sidebar/preferences?roleId=${editor.id}`).expect(401);
    });

    it('404 for an unknown or another tenant’s role', async () => {
      await del(manager.auth, `?roleId=${foreign.id}`).expect(404, { error: 'role not found' });
      await del(manager.auth, `?roleId=${randomUUID()}`).expect(404);
    });
  });
});
