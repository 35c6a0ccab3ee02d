import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { REDO_PATH, UNDO_PATH, undoRedoClient } from './support/undo-redo.js';

type Auth = Record<string, string>;
const ACTIONS = '/audit_logs/audit-logs/actions';
const MANAGER = ['auth.roles.*', 'auth.acl.manage', 'auth.users.list', 'audit_logs.*'];

/** The role as the database holds it: row, ACLs in every tenant, memberships. */
async function roleState(ds: DataSource, id: string) {
  const [role] = await ds.query('SELECT id, tenant_id, name, created_at FROM roles WHERE id = $1', [id]);
  const acls = await ds.query(
    'SELECT tenant_id, is_super_admin, features, organizations FROM role_acls WHERE role_id = $1 ORDER BY tenant_id',
    [id],
  );
  const members = await ds.query('SELECT user_id, tenant_id FROM user_roles WHERE role_id = $1 ORDER BY user_id', [id]);
  return { role: role ?? null, acls, members };
}

describe('undo and redo: POST /audit_logs/audit-logs/actions/undo|redo', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;

  /** A manager of its own fresh tenant (so "latest entry" is never another test's). */
  async function manager(tenant?: { id: string; organizationId: string }) {
    return f.loggedInUser(t, { features: MANAGER }, tenant);
  }
  const createRole = async (auth: Auth, name = `role-${randomUUID().slice(0, 8)}`) => {
    const res = await request(t.url).post('/auth/roles').set(auth).send({ name }).expect(201);
    expect(res.headers['x-undo-token']).toEqual(expect.any(String));
    return { id: res.body.id as string, name, token: res.headers['x-undo-token'] };
  };
  const undo = (auth: Auth, undoToken: unknown) => undoRedoClient(t).undo(auth, undoToken);
  const redo = (auth: Auth, logId: unknown) => undoRedoClient(t).redo(auth, logId);
  const entries = async (auth: Auth, query: object = {}) =>
    (
      await request(t.url)
        .get(ACTIONS)
        .set(auth)
        .query({ pageSize: 200, ...query })
        .expect(200)
    ).body.items as Record<string, any>[];

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  it('undo of a role create removes it exactly; redo brings back the same role with a fresh undo token', async () => {
    const m = await manager();
    const created = await createRole(m.auth);
    const before = await roleState(ds, created.id);

    const undone = await undo(m.auth, created.token).expect(200);
    expect(undone.body).toEqual({ ok: true, logId: expect.any(String) });
    expect(await roleState(ds, created.id)).toEqual({ role: null, acls: [], members: [] });

    const [undoEntry, original] = await entries(m.auth);
    expect(original).toMatchObject({
      id: undone.body.logId,
      commandId: 'auth.roles.create',
      executionState: 'undone',
      undoToken: null,
      source: 'api',
    });
    expect(undoEntry).toMatchObject({
      commandId: 'auth.roles.create',
      source: 'undo',
      resourceId: created.id,
      actionLabel: 'Undo: Create role',
      context: { undoOfLogId: undone.body.logId },
      changes: { name: { from: created.name, to: null } },
      undoToken: null,
    });

    const redone = await redo(m.auth, undone.body.logId).expect(200);
    expect(redone.body).toEqual({ ok: true, logId: undone.body.logId, undoToken: expect.any(String) });
    expect(redone.body.undoToken).not.toBe(created.token);
    expect(await roleState(ds, created.id)).toEqual(before);
    const [redoEntry, , again] = await entries(m.auth);
    expect(redoEntry).toMatchObject({ source: 'redo', context: { redoOfLogId: undone.body.logId } });
    expect(again).toMatchObject({ id: undone.body.logId, executionState: 'redone', undoToken: redone.body.undoToken });

    // The fresh token undoes the redone entry once more.
    await undo(m.auth, redone.body.undoToken).expect(200);
    expect((await roleState(ds, created.id)).role).toBeNull();
  });

  it('undo of a role edit restores the exact prior name (ACL untouched); redo re-applies the edit', async () => {
    const m = await manager();
    const role = await createRole(m.auth);
    await request(t.url)
      .put('/auth/roles/acl')
      .set(m.auth)
      .send({ roleId: role.id, features: ['auth.users.list'] })
      .expect(200);
    const before = await roleState(ds, role.id);

    const renamed = await request(t.url)
      .put('/auth/roles')
      .set(m.auth)
      .send({ id: role.id, name: `${role.name}-renamed` })
      .expect(200);
    const token = renamed.headers['x-undo-token'];
    expect(token).toEqual(expect.any(String));
    const after = await roleState(ds, role.id);
    expect(after.role.name).toBe(`${role.name}-renamed`);
    const [edit] = await entries(m.auth, { actionType: 'edit' });
    expect(edit).toMatchObject({ commandId: 'auth.roles.update', changes: { name: { from: role.name, to: `${role.name}-renamed` } } });

    const undone = await undo(m.auth, token).expect(200);
    expect(await roleState(ds, role.id)).toEqual(before);

    await redo(m.auth, undone.body.logId).expect(200);
    expect(await roleState(ds, role.id)).toEqual(after);
  });

  it('undo of a role delete brings back the role, its ACL and its memberships exactly; redo deletes it again', async () => {
    const m = await manager();
    const role = await createRole(m.auth);
    await request(t.url)
      .put('/auth/roles/acl')
      .set(m.auth)
      .send({ roleId: role.id, features: ['auth.users.list', 'auth.roles.list'], organizations: [m.tenant.organizationId] })
      .expect(200);
    // A deleted user's membership does not block the delete, and the snapshot keeps it.
    const gone = await f.user(m.tenant, { roleIds: [role.id] });
    await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [gone.id]);
    const before = await roleState(ds, role.id);
    expect(before.acls).toHaveLength(1);
    expect(before.members).toHaveLength(1);

    const deleted = await request(t.url).delete('/auth/roles').set(m.auth).query({ id: role.id }).expect(200);
    expect(deleted.headers['x-undo-token']).toEqual(expect.any(String));
    expect(await roleState(ds, role.id)).toEqual({ role: null, acls: [], members: [] });

    const undone = await undo(m.auth, deleted.headers['x-undo-token']).expect(200);
    expect(await roleState(ds, role.id)).toEqual(before);
    const acl = await request(t.url).get('/auth/roles/acl').set(m.auth).query({ roleId: role.id }).expect(200);
    expect(acl.body).toEqual({
      isSuperAdmin: false,
      features: ['auth.users.list', 'auth.roles.list'],
      organizations: [m.tenant.organizationId],
    });

    await redo(m.auth, undone.body.logId).expect(200);
    expect(await roleState(ds, role.id)).toEqual({ role: null, acls: [], members: [] });
  });

  it('refuses (400) an undo of someone else’s entry, even in the same tenant and with every feature', async () => {
    const owner = await manager();
    const other = await manager(owner.tenant);
    const role = await createRole(owner.auth);
    const res = await undo(other.auth, role.token).expect(400);
    expect(res.body).toEqual({ error: expect.any(String) });
    expect((await roleState(ds, role.id)).role).not.toBeNull();
    // The owner still can.
    await undo(owner.auth, role.token).expect(200);
  });

  it('refuses a redo of someone else’s undone entry (400)', async () => {
    const owner = await manager();
    const other = await manager(owner.tenant);
    const role = await createRole(owner.auth);
    const undone = await undo(owner.auth, role.token).expect(200);
    expect((await redo(other.auth, undone.body.logId).expect(400)).body).toEqual({ error: expect.any(String) });
    await redo(owner.auth, undone.body.logId).expect(200);
  });

  it('400 for an unknown, stale or already used token, and for a token that is not the caller’s latest', async () => {
    const m = await manager();
    expect((await undo(m.auth, 'not-a-real-token').expect(400)).body).toEqual({ error: expect.any(String) });
    const first = await createRole(m.auth);
    const second = await createRole(m.auth);
    await undo(m.auth, first.token).expect(400); // not the latest undoable entry
    await undo(m.auth, second.token).expect(200);
    await undo(m.auth, second.token).expect(400); // used
    // Once the latest is undone, the previous entry is the latest undoable one.
    await undo(m.auth, first.token).expect(200);
  });

  it('400 for a redo of an entry that is not the latest undone one, not undone, or not a UUID', async () => {
    const m = await manager();
    const a = await createRole(m.auth);
    const b = await createRole(m.auth);
    const [entryB] = await entries(m.auth);
    await redo(m.auth, entryB.id).expect(400); // done, not undone
    const undoneB = await undo(m.auth, b.token).expect(200);
    const undoneA = await undo(m.auth, a.token).expect(200);
    await redo(m.auth, undoneB.body.logId).expect(400); // A was undone later
    await redo(m.auth, undoneA.body.logId).expect(200);
    await redo(m.auth, undoneA.body.logId).expect(400); // already redone
    await redo(m.auth, randomUUID()).expect(400);
    expect((await redo(m.auth, 'nope').expect(400)).body).toEqual(expect.objectContaining({ error: expect.stringContaining('logId') }));
    expect((await undo(m.auth, '').expect(400)).body).toEqual(expect.objectContaining({ error: expect.stringContaining('undoToken') }));
  });

  it('an undo that would clobber a later change made outside the entry is refused (400) and changes nothing', async () => {
    const m = await manager();
    const role = await createRole(m.auth);
    await ds.query('UPDATE roles SET name = $2 WHERE id = $1', [role.id, `${role.name}-elsewhere`]);
    await undo(m.auth, role.token).expect(400);
    expect((await roleState(ds, role.id)).role.name).toBe(`${role.name}-elsewhere`);
    const [entry] = await entries(m.auth);
    expect(entry).toMatchObject({ executionState: 'done', undoToken: role.token });
  });

  it('two concurrent undos of one token: exactly one applies', async () => {
    const m = await manager();
    const role = await createRole(m.auth);
    const [r1, r2] = await Promise.all([undo(m.auth, role.token), undo(m.auth, role.token)]);
    expect([r1.status, r2.status].sort()).toEqual([200, 400]);
    const undos = await entries(m.auth, { resourceId: role.id });
    expect(undos.filter((e) => e.source === 'undo')).toHaveLength(1);
    expect(undos.find((e) => e.source === 'api')).toMatchObject({ executionState: 'undone' });
    expect((await roleState(ds, role.id)).role).toBeNull();
  });

  it('many concurrent undos of several users’ tokens each apply once', async () => {
    const tenant = await f.tenant();
    const users = await Promise.all([1, 2, 3].map(() => manager(tenant)));
    const roles: { id: string; token: string }[] = [];
    for (const u of users) roles.push(await createRole(u.auth));
    const results = await Promise.all(
      users.flatMap((u, i) => [undo(u.auth, roles[i].token), undo(u.auth, roles[i].token), undo(u.auth, roles[i].token)]),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 400)).toHaveLength(6);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM action_logs WHERE tenant_id = $1 AND source = 'undo'`, [tenant.id]);
    expect(n).toBe(3);
  });

  it('403 without audit_logs.undo_self / audit_logs.redo_self; 401 without a token', async () => {
    const m = await f.loggedInUser(t, { features: ['auth.roles.*', 'audit_logs.view_self'] });
    const role = await createRole(m.auth);
    expect((await undo(m.auth, role.token).expect(403)).body).toEqual({ error: expect.stringContaining('audit_logs.undo_self') });
    expect((await redo(m.auth, randomUUID()).expect(403)).body).toEqual({ error: expect.stringContaining('audit_logs.redo_self') });
    await request(t.url).post(UNDO_PATH).send({ undoToken: role.token }).expect(401);
    await request(t.url).post(REDO_PATH).send({ logId: randomUUID() }).expect(401);
  });
});
