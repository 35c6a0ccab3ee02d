import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { commandSpecApp, type AuthHeaders } from './support/undo-redo.js';

const MANAGER = ['auth.sidebar.manage', 'audit_logs.*'];

const settings = (hidden: string[]) => ({
  version: 2,
  groupOrder: [],
  groupLabels: {},
  itemLabels: {},
  hiddenItems: hidden,
  itemOrder: {},
});

describe('commands: sidebar preferences and variants are undoable', () => {
  const spec = commandSpecApp(MANAGER);
  const { manager, undo, redo, lastEntry } = spec;
  /** Every preference row of the tenant, as stored (ids, and timestamps as text: to the microsecond). */
  const preferenceRows = (tenantId: string) =>
    spec.ds.query(
      `SELECT id, scope, user_id, role_id, locale, settings, created_at::text FROM sidebar_preferences
        WHERE tenant_id = $1 ORDER BY scope, user_id, role_id, locale`,
      [tenantId],
    );
  const variantRows = (userId: string) =>
    spec.ds.query(
      'SELECT id, name, is_active, settings, created_at::text, updated_at::text FROM sidebar_variants WHERE user_id = $1 ORDER BY created_at, id',
      [userId],
    );
  const putPreferences = (auth: AuthHeaders, body: object) =>
    request(spec.t.url).put('/auth/sidebar/preferences').set(auth).send(body).expect(200);

  describe('PUT /auth/sidebar/preferences (auth.sidebar.preferences.update)', () => {
    it('user scope, first save: undo removes the row, redo saves it again', async () => {
      const m = await manager();
      const res = await putPreferences(m.auth, { settings: { hiddenItems: [' a ', 'a'] } });
      const token = res.headers['x-undo-token'];
      expect(token).toEqual(expect.any(String));
      const entry = await lastEntry(m.user.id);
      expect(entry).toMatchObject({
        command_id: 'auth.sidebar.preferences.update',
        action_type: 'edit',
        resource_kind: 'auth.sidebar_preference',
        resource_id: `${m.tenant.id}:user:${m.user.id}:en`,
        parent_resource_kind: 'auth.user',
        parent_resource_id: m.user.id,
        snapshot_before: null,
        snapshot_after: { scope: 'user', userId: m.user.id, locale: 'en', settings: settings(['a']) },
      });
      expect(entry.changes.settings).toEqual({ from: null, to: settings(['a']) });

      const undone = await undo(m.auth, token).expect(200);
      expect(await preferenceRows(m.tenant.id)).toEqual([]);
      expect((await request(spec.t.url).get('/auth/sidebar/preferences').set(m.auth).expect(200)).body.settings).toEqual(settings([]));

      await redo(m.auth, undone.body.logId).expect(200);
      const rows = await preferenceRows(m.tenant.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ scope: 'user', user_id: m.user.id, settings: settings(['a']) });
    });

    it('user scope with applyToRoles and clearRoleIds: one undo restores the user row and both role rows exactly', async () => {
      const m = await manager();
      const applied = await spec.f.role(m.tenant.id);
      const cleared = await spec.f.role(m.tenant.id);
      await putPreferences(m.auth, { settings: { hiddenItems: ['old'] } });
      await putPreferences(m.auth, { scope: { type: 'role', roleId: cleared.id }, settings: { hiddenItems: ['cleared'] } });
      const before = await preferenceRows(m.tenant.id);
      expect(before).toHaveLength(2);

      const res = await putPreferences(m.auth, {
        settings: { hiddenItems: ['new'] },
        applyToRoles: [applied.id],
        clearRoleIds: [cleared.id],
      });
      expect(res.body).toMatchObject({ appliedRoles: [applied.id], clearedRoles: [cleared.id] });
      const after = await preferenceRows(m.tenant.id);
      expect(after.map((r: { role_id: string | null }) => r.role_id)).toEqual([applied.id, null]);
      const entry = await lastEntry(m.user.id);
      expect(entry.resource_id).toBe(`${m.tenant.id}:user+roles:${m.user.id}:en`);
      expect(entry.changes).toMatchObject({
        settings: { from: settings(['old']), to: settings(['new']) },
        roles: {
          from: [{ roleId: cleared.id, settings: settings(['cleared']), createdAt: expect.any(String) }],
          to: [{ roleId: applied.id, settings: settings(['new']), createdAt: expect.any(String) }],
        },
      });

      const undone = await undo(m.auth, res.headers['x-undo-token']).expect(200);
      const restored = await preferenceRows(m.tenant.id);
      // Same values and creation times; the cleared role's row is a new row (new id).
      const strip = (rows: Record<string, unknown>[]) => rows.map(({ id: _id, ...rest }) => rest);
      expect(strip(restored)).toEqual(strip(before));
      expect(restored.find((r: { user_id: string | null }) => r.user_id)).toEqual(
        before.find((r: { user_id: string | null }) => r.user_id),
      );

      await redo(m.auth, undone.body.logId).expect(200);
      expect(strip(await preferenceRows(m.tenant.id))).toEqual(strip(after));
    });

    it('role scope: undo restores the role’s previous settings', async () => {
      const m = await manager();
      const role = await spec.f.role(m.tenant.id);
      await putPreferences(m.auth, { scope: { type: 'role', roleId: role.id }, settings: { hiddenItems: ['one'] } });
      const before = await preferenceRows(m.tenant.id);
      const res = await putPreferences(m.auth, {
        scope: { type: 'role', roleId: role.id.toUpperCase() },
        settings: { hiddenItems: ['two'] },
      });
      expect(await lastEntry(m.user.id)).toMatchObject({
        resource_id: `${m.tenant.id}:role:${role.id}:en`,
        changes: { settings: { from: settings(['one']), to: settings(['two']) } },
      });
      await undo(m.auth, res.headers['x-undo-token']).expect(200);
      expect(await preferenceRows(m.tenant.id)).toEqual(before);
    });

    it('a 404 (unknown role) records nothing', async () => {
      const m = await manager();
      await request(spec.t.url)
        .put('/auth/sidebar/preferences')
        .set(m.auth)
        .send({ settings: {}, applyToRoles: ['5b6c9a8e-1f2d-4c3b-9a7e-0d1c2b3a4f5e'] })
        .expect(404);
      expect(await lastEntry(m.user.id)).toBeUndefined();
    });
  });

  describe('DELETE /auth/sidebar/preferences (auth.sidebar.preferences.delete)', () => {
    it('undo brings the role’s row back with its settings and creation time; redo removes it again', async () => {
      const m = await manager();
      const role = await spec.f.role(m.tenant.id);
      await putPreferences(m.auth, { scope: { type: 'role', roleId: role.id }, settings: { hiddenItems: ['kept'] } });
      const before = await preferenceRows(m.tenant.id);

      const res = await request(spec.t.url).delete('/auth/sidebar/preferences').set(m.auth).query({ roleId: role.id }).expect(200);
      expect(res.body).toEqual({ ok: true, scope: { type: 'role', roleId: role.id } });
      expect(await lastEntry(m.user.id)).toMatchObject({
        command_id: 'auth.sidebar.preferences.delete',
        action_type: 'delete',
        resource_kind: 'auth.sidebar_preference',
        resource_id: `${m.tenant.id}:role:${role.id}:en`,
        snapshot_after: null,
        snapshot_before: { scope: 'role', roleId: role.id, settings: settings(['kept']) },
      });
      expect(await preferenceRows(m.tenant.id)).toEqual([]);

      const undone = await undo(m.auth, res.headers['x-undo-token']).expect(200);
      const restored = await preferenceRows(m.tenant.id);
      expect({ ...restored[0], id: undefined }).toEqual({ ...before[0], id: undefined });

      await redo(m.auth, undone.body.logId).expect(200);
      expect(await preferenceRows(m.tenant.id)).toEqual([]);
    });
  });

  describe('POST /auth/sidebar/variants (auth.sidebar.variants.create)', () => {
    it('undo deletes the new variant and re-activates the one it deactivated, exactly; redo brings the same variant back', async () => {
      const m = await manager();
      await request(spec.t.url)
        .post('/auth/sidebar/variants')
        .set(m.auth)
        .send({ name: 'First', isActive: true, settings: { hiddenItems: ['x'] } })
        .expect(200);
      const before = await variantRows(m.user.id);
      expect(before).toMatchObject([{ name: 'First', is_active: true, updated_at: null }]);

      const res = await request(spec.t.url).post('/auth/sidebar/variants').set(m.auth).send({ isActive: true }).expect(200);
      expect(res.body.variant).toMatchObject({ name: 'My preferences', isActive: true });
      const token = res.headers['x-undo-token'];
      expect(token).toEqual(expect.any(String));
      const after = await variantRows(m.user.id);
      expect(after.map((v: { is_active: boolean }) => v.is_active)).toEqual([false, true]);

      const entry = await lastEntry(m.user.id);
      expect(entry).toMatchObject({
        command_id: 'auth.sidebar.variants.create',
        action_type: 'create',
        resource_kind: 'auth.sidebar_variants',
        resource_id: `${m.tenant.id}:${m.user.id}:en`,
        parent_resource_kind: 'auth.user',
        parent_resource_id: m.user.id,
      });
      expect(entry.changes.activeVariantId).toEqual({ from: before[0].id, to: res.body.variant.id });

      const undone = await undo(m.auth, token).expect(200);
      expect(await variantRows(m.user.id)).toEqual(before); // updated_at back to null, timestamps to the microsecond
      const listed = await request(spec.t.url).get('/auth/sidebar/variants').set(m.auth).expect(200);
      expect(listed.body.variants).toMatchObject([{ name: 'First', isActive: true }]);

      await redo(m.auth, undone.body.logId).expect(200);
      expect(await variantRows(m.user.id)).toEqual(after);
    });

    it('the first variant: undo leaves the set empty', async () => {
      const m = await manager();
      const res = await request(spec.t.url).post('/auth/sidebar/variants').set(m.auth).send({}).expect(200);
      expect((await lastEntry(m.user.id)).snapshot_before).toBeNull();
      await undo(m.auth, res.headers['x-undo-token']).expect(200);
      expect(await variantRows(m.user.id)).toEqual([]);
    });
  });
});
