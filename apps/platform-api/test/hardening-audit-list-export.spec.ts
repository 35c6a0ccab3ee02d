import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { undoRedoClient } from './support/undo-redo.js';

type Auth = Record<string, string>;
const ACTIONS = '/audit_logs/audit-logs/actions';
const EXPORT = '/audit_logs/audit-logs/actions/export';

/** Issue #11 items 7 (undoableOnly lists what the caller can undo) and 9 (CSV export neutralises formulas). */
describe('action log: undoableOnly and CSV formula cells', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  const list = async (auth: Auth, query: object) =>
    (
      await request(t.url)
        .get(ACTIONS)
        .set(auth)
        .query({ pageSize: 200, ...query })
        .expect(200)
    ).body.items as Record<string, any>[];
  const createRole = async (auth: Auth, name: string) => {
    const res = await request(t.url).post('/auth/roles').set(auth).send({ name }).expect(201);
    return { id: res.body.id as string, token: res.headers['x-undo-token'] };
  };

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET actions?undoableOnly=true', () => {
    it('a tenant viewer gets only its own undoable entries, each with its undo token; a colleague’s are not listed', async () => {
      const tenant = await f.tenant();
      const viewer = await f.loggedInUser(t, { features: ['auth.roles.*', 'audit_logs.*'] }, tenant);
      const colleague = await f.loggedInUser(t, { features: ['auth.roles.*', 'audit_logs.view_self', 'audit_logs.undo_self'] }, tenant);
      const mine = await createRole(viewer.auth, `mine-${randomUUID().slice(0, 6)}`);
      const theirs = await createRole(colleague.auth, `theirs-${randomUUID().slice(0, 6)}`);
      // The viewer sees the colleague's entry in the plain list (tenant viewer), without its token.
      const all = await list(viewer.auth, {});
      expect(all.find((e) => e.resourceId === theirs.id)).toMatchObject({ actorUserId: colleague.user.id, undoToken: null });

      const undoable = await list(viewer.auth, { undoableOnly: 'true' });
      expect(undoable.map((e) => e.resourceId)).toEqual([mine.id]);
      expect(undoable[0]).toMatchObject({ actorUserId: viewer.user.id, undoToken: mine.token, executionState: 'done' });
      const theirsUndoable = await list(colleague.auth, { undoableOnly: 'true' });
      expect(theirsUndoable.map((e) => [e.resourceId, e.undoToken])).toEqual([[theirs.id, theirs.token]]);

      // Undone entries are no longer undoable; a redo makes them undoable again with the fresh token.
      const undone = await undoRedoClient(t).undo(viewer.auth, mine.token).expect(200);
      expect(await list(viewer.auth, { undoableOnly: 'true' })).toEqual([]);
      const redone = await undoRedoClient(t).redo(viewer.auth, undone.body.logId).expect(200);
      expect((await list(viewer.auth, { undoableOnly: 'true' })).map((e) => [e.id, e.undoToken])).toEqual([
        [undone.body.logId, redone.body.undoToken],
      ]);
    });

    it('the caller’s own entries made in another organization context (which an undo refuses) are not listed, nor their token shown', async () => {
      const tenant = await f.tenant();
      const [{ id: orgB }] = await ds.query(
        `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'B', 'org-' || gen_random_uuid()) RETURNING id`,
        [tenant.id],
      );
      const viewer = await f.loggedInUser(t, { features: ['auth.roles.*', 'audit_logs.*'] }, tenant);
      const [{ id: elsewhere }] = await ds.query(
        `INSERT INTO action_logs (tenant_id, organization_id, actor_user_id, command_id, action_type, resource_kind, resource_id, undo_token, changes, changed_fields)
         VALUES ($1, $2, $3, 'auth.roles.update', 'edit', 'auth.role', $4, $5, '{}', '{}') RETURNING id`,
        [tenant.id, orgB, viewer.user.id, randomUUID(), `tok-${randomUUID()}`],
      );
      const mine = await createRole(viewer.auth, `mine-${randomUUID().slice(0, 6)}`);
      expect((await list(viewer.auth, { undoableOnly: 'true' })).map((e) => e.resourceId)).toEqual([mine.id]);
      expect((await list(viewer.auth, {})).find((e) => e.id === elsewhere)).toMatchObject({ undoToken: null });
    });
  });

  describe('CSV export', () => {
    const exportRows = async (auth: Auth, query: object) => {
      const res = await request(t.url)
        .get(EXPORT)
        .set(auth)
        .query(query)
        .buffer(true)
        .parse((r, done) => {
          let text = '';
          r.setEncoding('utf8');
          r.on('data', (chunk: string) => (text += chunk));
          r.on('end', () => done(null, text));
        })
        .expect(200);
      return parse<Record<string, string>>(res.body as string, { columns: true, relax_column_count: false });
    };

    it('a cell beginning with =, +, -, @, tab or CR is prefixed with a single quote; other cells are exact', async () => {
      const tenant = await f.tenant();
      const admin = await f.loggedInUser(t, { features: ['auth.roles.*', 'audit_logs.*'] }, tenant);
      const tabbed = await f.loggedInUser(t, { features: ['auth.roles.*', 'audit_logs.view_self'] }, tenant);
      const carriage = await f.loggedInUser(t, { features: ['auth.roles.*', 'audit_logs.view_self'] }, tenant);
      await ds.query('UPDATE users SET name = $2 WHERE id = $1', [admin.user.id, '@admin']);
      await ds.query('UPDATE users SET name = $2 WHERE id = $1', [tabbed.user.id, '\t=tabbed']);
      await ds.query('UPDATE users SET name = $2 WHERE id = $1', [carriage.user.id, '\r=carriage']);

      const role = await createRole(admin.auth, 'Plain name');
      const names = ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2+3', '@SUM(A1)', 'Back to plain'];
      for (const name of names) await request(t.url).put('/auth/roles').set(admin.auth).send({ id: role.id, name }).expect(200);
      await createRole(tabbed.auth, 'By tab');
      await createRole(carriage.auth, 'By carriage');

      const rows = await exportRows(admin.auth, { sortDir: 'asc' });
      const renames = rows.filter((r) => r.Action === 'Edit role' && r.Field === 'name');
      const olds = ['Plain name', ...names.slice(0, -1)];
      expect(renames.map((r) => [r['Old value'], r['New value']])).toEqual(
        names.map((to, i) => [olds[i], to].map((v) => (/^[=+\-@]/.test(v) ? `'${v}` : v))),
      );
      expect(new Set(rows.filter((r) => r.Resource === `auth.role:${role.id}`).map((r) => r.User))).toEqual(new Set(["'@admin"]));
      expect(rows.find((r) => r['New value'] === 'By tab')?.User).toBe("'\t=tabbed");
      expect(rows.find((r) => r['New value'] === 'By carriage')?.User).toBe("'\r=carriage");
      // Cells that do not start like a formula are untouched.
      for (const row of rows) {
        expect(row.When).toMatch(/^\d{4}-\d\d-\d\dT/);
        expect(row.Source).toBe('api');
      }
      expect(rows.find((r) => r['New value'] === 'Plain name')).toMatchObject({ 'Old value': 'null', Field: 'name' });
    });
  });
});
