import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { undoRedoClient } from './support/undo-redo.js';

type Auth = Record<string, string>;
const ACTIONS = '/audit_logs/audit-logs/actions';
const EXPORT = '/audit_logs/audit-logs/actions/export';
const ADMIN = ['auth.acl.manage', 'auth.roles.*', 'auth.users.list', 'audit_logs.*'];
const SECRET_FEATURE = 'other.tenant.secret';

/**
 * Issue #11 item 4: an action log entry for a global role's ACL holds only what the writer's tenant may
 * see (its ACL and members there), in the snapshots, the changes and the CSV export; its undo and redo
 * leave the other tenants' part of the role alone.
 */
describe('action log snapshots of a global role hold only the writer’s tenant', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  const roleAcls = (roleId: string) =>
    ds.query('SELECT tenant_id, features, organizations FROM role_acls WHERE role_id = $1 ORDER BY tenant_id', [roleId]);
  const entriesOf = async (auth: Auth, resourceId: string) =>
    (await request(t.url).get(ACTIONS).set(auth).query({ resourceId, pageSize: 200 }).expect(200)).body.items as Record<string, any>[];
  const exportText = async (auth: Auth, resourceId: string) =>
    (
      await request(t.url)
        .get(EXPORT)
        .set(auth)
        .query({ resourceId })
        .buffer(true)
        .parse((res, done) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => done(null, text));
        })
        .expect(200)
    ).body as string;

  /** A global role with an ACL and a member in the writer's tenant and in another tenant. */
  async function globalRoleInTwoTenants() {
    const own = await f.tenant();
    const other = await f.tenant();
    const admin = await f.loggedInUser(t, { features: ADMIN }, own);
    const role = await f.role(null, { features: ['auth.users.list'] }, { aclTenantId: own.id });
    await ds.query('INSERT INTO role_acls (tenant_id, role_id, features, organizations) VALUES ($1, $2, $3, $4)', [
      other.id,
      role.id,
      [SECRET_FEATURE],
      JSON.stringify([other.organizationId]),
    ]);
    const ownMember = await f.user(own, { roleIds: [role.id] });
    const otherMember = await f.user(other, { roleIds: [role.id] });
    return { own, other, admin, role, ownMember, otherMember };
  }
  const secretsOf = (s: { other: { id: string; organizationId: string }; otherMember: { id: string } }) => [
    s.other.id,
    s.other.organizationId,
    s.otherMember.id,
    SECRET_FEATURE,
  ];

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  it('a tenant administrator’s ACL write: snapshots, changes and CSV hold its tenant’s ACL and members only', async () => {
    const s = await globalRoleInTwoTenants();
    await request(t.url)
      .put('/auth/roles/acl')
      .set(s.admin.auth)
      .send({ roleId: s.role.id, features: ['auth.users.list', 'auth.roles.list'] })
      .expect(200);

    const [entry] = await entriesOf(s.admin.auth, s.role.id);
    expect(entry).toMatchObject({ commandId: 'auth.roles.acl.update', resourceId: s.role.id });
    const ownAcl = (features: string[]) => [{ tenantId: s.own.id, isSuperAdmin: false, features, organizations: null }];
    expect(entry.snapshotBefore).toMatchObject({ id: s.role.id, tenantId: null, acls: ownAcl(['auth.users.list']) });
    expect(entry.snapshotBefore.members).toEqual([{ userId: s.ownMember.id, tenantId: s.own.id }]);
    expect(entry.snapshotAfter).toMatchObject({ acls: ownAcl(['auth.users.list', 'auth.roles.list']) });
    expect(entry.snapshotAfter.members).toEqual([{ userId: s.ownMember.id, tenantId: s.own.id }]);
    expect(entry.changes).toEqual({ acls: { from: ownAcl(['auth.users.list']), to: ownAcl(['auth.users.list', 'auth.roles.list']) } });

    const stored = (await ds.query('SELECT snapshot_before, snapshot_after, changes FROM action_logs WHERE id = $1', [entry.id]))[0];
    const csv = await exportText(s.admin.auth, s.role.id);
    expect(csv).toContain('auth.roles.list');
    for (const secret of secretsOf(s)) {
      expect(JSON.stringify(entry)).not.toContain(secret);
      expect(JSON.stringify(stored)).not.toContain(secret);
      expect(csv).not.toContain(secret);
    }
  });

  it('its undo and redo restore the writer’s tenant’s ACL and leave the other tenant’s (changed meanwhile) alone', async () => {
    const s = await globalRoleInTwoTenants();
    const res = await request(t.url)
      .put('/auth/roles/acl')
      .set(s.admin.auth)
      .send({ roleId: s.role.id, features: ['auth.roles.list'] })
      .expect(200);
    // Another tenant's administrator changes its own ACL of the role meanwhile: not this entry's business.
    await ds.query(`UPDATE role_acls SET features = '{changed.elsewhere}' WHERE role_id = $1 AND tenant_id = $2`, [s.role.id, s.other.id]);
    const theirs = { tenant_id: s.other.id, features: ['changed.elsewhere'], organizations: [s.other.organizationId] };
    const sorted = <T extends { tenant_id: string }>(rows: T[]) => [...rows].sort((a, b) => (a.tenant_id < b.tenant_id ? -1 : 1));

    const undone = await undoRedoClient(t).undo(s.admin.auth, res.headers['x-undo-token']).expect(200);
    expect(await roleAcls(s.role.id)).toEqual(
      sorted([{ tenant_id: s.own.id, features: ['auth.users.list'], organizations: null }, theirs]),
    );
    await undoRedoClient(t).redo(s.admin.auth, undone.body.logId).expect(200);
    expect(await roleAcls(s.role.id)).toEqual(
      sorted([{ tenant_id: s.own.id, features: ['auth.roles.list'], organizations: null }, theirs]),
    );

    const replays = (await entriesOf(s.admin.auth, s.role.id)).filter((e) => e.source !== 'api');
    expect(replays.map((e) => e.source)).toEqual(['redo', 'undo']);
    for (const replay of replays) {
      for (const secret of [...secretsOf(s), 'changed.elsewhere']) expect(JSON.stringify(replay)).not.toContain(secret);
    }
  });

  it('a super administrator writing another tenant’s ACL of the role: the entry holds that tenant’s part only', async () => {
    const s = await globalRoleInTwoTenants();
    const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true }, s.own);
    await request(t.url)
      .put('/auth/roles/acl')
      .set(superAdmin.auth)
      .send({ roleId: s.role.id, tenantId: s.other.id, features: ['x.y'], organizations: [s.other.organizationId] })
      .expect(200);
    const [entry] = await entriesOf(superAdmin.auth, s.role.id);
    expect(entry.snapshotBefore.acls).toEqual([
      { tenantId: s.other.id, isSuperAdmin: false, features: [SECRET_FEATURE], organizations: [s.other.organizationId] },
    ]);
    expect(entry.snapshotAfter.acls).toEqual([
      { tenantId: s.other.id, isSuperAdmin: false, features: ['x.y'], organizations: [s.other.organizationId] },
    ]);
    expect(entry.snapshotAfter.members).toEqual([{ userId: s.otherMember.id, tenantId: s.other.id }]);
    expect(JSON.stringify(entry)).not.toContain(s.ownMember.id);
  });
});
