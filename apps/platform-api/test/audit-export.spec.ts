import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AccessLogService } from '../src/core/audit/access-log.service.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
const EXPORT = '/audit_logs/audit-logs/actions/export';
const ACTIONS = '/audit_logs/audit-logs/actions';
const COLUMNS = ['When', 'User', 'Action', 'Resource', 'Field', 'Old value', 'New value', 'Source'];

interface Entry {
  createdAt: string;
  actorUserId: string | null;
  actorUserName: string | null;
  actionLabel: string | null;
  commandId: string;
  resourceKind: string | null;
  resourceId: string | null;
  changes: Record<string, { from: unknown; to: unknown }> | null;
  source: string;
}

/** What a CSV row says about an entry, decoded: values that are not strings are JSON. */
function expectedRows(entries: Entry[]): Record<string, unknown>[] {
  const value = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v ?? null));
  return entries.flatMap((e) => {
    const base = {
      When: e.createdAt,
      User: e.actorUserName ?? e.actorUserId ?? '',
      Action: e.actionLabel ?? e.commandId,
      Resource: [e.resourceKind, e.resourceId].filter(Boolean).join(':'),
      Source: e.source,
    };
    const changes = Object.entries(e.changes ?? {});
    if (!changes.length) return [{ ...base, Field: '', 'Old value': '', 'New value': '' }];
    return changes.map(([field, c]) => ({ ...base, Field: field, 'Old value': value(c.from), 'New value': value(c.to) }));
  });
}

describe('GET /audit_logs/audit-logs/actions/export', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenant: { id: string; organizationId: string };
  let admin: { auth: Auth; user: { id: string } };
  let editor: { auth: Auth; user: { id: string } };

  const exportCsv = (auth: Auth, query: object = {}) =>
    request(t.url)
      .get(EXPORT)
      .set(auth)
      .query(query)
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done(null, text));
      });
  const rowsOf = (res: request.Response) => parse<Record<string, string>>(res.body as string, { columns: true, skip_empty_lines: false });
  const listed = async (auth: Auth, query: object = {}) =>
    (
      await request(t.url)
        .get(ACTIONS)
        .set(auth)
        .query({ limit: 1000, ...query })
        .expect(200)
    ).body.items as Entry[];

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenant = await f.tenant();
    admin = await f.loggedInUser(t, { features: ['auth.roles.*', 'auth.acl.manage', 'audit_logs.*'] }, tenant);
    editor = await f.loggedInUser(t, { features: ['auth.roles.*', 'audit_logs.view_self'] }, tenant);
    await ds.query(`UPDATE users SET name = $2 WHERE id = $1`, [editor.user.id, 'Édith "the editor", Ørsted']);

    // Real entries: role writes through the command bus.
    const created = await request(t.url).post('/auth/roles').set(admin.auth).send({ name: 'Sales, "EMEA"' }).expect(201);
    await request(t.url).put('/auth/roles').set(admin.auth).send({ id: created.body.id, name: 'Sales\nline two' }).expect(200);
    const other = await request(t.url).post('/auth/roles').set(editor.auth).send({ name: 'Ünïcødé ✓' }).expect(201);
    await request(t.url).delete('/auth/roles').set(editor.auth).query({ id: other.body.id }).expect(200);
    // Hand-made entries: every kind of value, and an entry that changed nothing.
    await ds.query(
      `INSERT INTO action_logs (tenant_id, organization_id, actor_user_id, command_id, action_label, action_type, resource_kind, resource_id,
         changes, changed_fields, source, created_at)
       VALUES ($1, $2, $3, 'x.edit', NULL, 'edit', 'x.thing', $4, $5, $6, 'redo', now() - interval '1 day'),
              ($1, $2, $3, 'x.assign', 'Assign =SUM(A1)', 'assign', 'x.thing', NULL, '{}', '{}', 'api', now() - interval '2 days')`,
      [
        tenant.id,
        tenant.organizationId,
        admin.user.id,
        randomUUID(),
        JSON.stringify({
          count: { from: 1, to: 2.5 },
          flags: { from: [true, false], to: [] },
          nested: { from: { a: { b: 'c' } }, to: null },
          text: { from: '', to: 'say "hi",\r\nbye' },
          empty: { from: null, to: 'now set' },
        }),
        ['count', 'flags', 'nested', 'text', 'empty'],
      ],
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a CSV attachment: content type, disposition, the spec’s columns in order', async () => {
    const res = await exportCsv(admin.auth).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="action-logs.csv"');
    expect((res.body as string).split('\r\n')[0]).toBe(COLUMNS.join(','));
  });

  it('parses back (csv-parse) to exactly the entries of the list: one row per changed field, quoting intact', async () => {
    const rows = rowsOf(await exportCsv(admin.auth).expect(200));
    const entries = await listed(admin.auth);
    expect(entries).toHaveLength(6);
    expect(rows).toEqual(expectedRows(entries));
    // Spot checks of the awkward values.
    expect(rows).toContainEqual(expect.objectContaining({ Field: 'name', 'Old value': 'Sales, "EMEA"', 'New value': 'Sales\nline two' }));
    expect(rows).toContainEqual(expect.objectContaining({ Field: 'text', 'New value': 'say "hi",\r\nbye' }));
    expect(rows).toContainEqual(expect.objectContaining({ Field: 'count', 'Old value': '1', 'New value': '2.5' }));
    expect(rows).toContainEqual(expect.objectContaining({ Field: 'nested', 'Old value': '{"a":{"b":"c"}}', 'New value': 'null' }));
    expect(rows).toContainEqual(expect.objectContaining({ User: 'Édith "the editor", Ørsted', Action: 'Create role' }));
    expect(rows).toContainEqual(
      expect.objectContaining({ Action: 'Assign =SUM(A1)', Resource: 'x.thing', Field: '', 'Old value': '', 'New value': '' }),
    );
    expect(rows).toContainEqual(expect.objectContaining({ Action: 'x.edit', Source: 'redo' }));
  });

  it('takes the list’s filters and sort', async () => {
    for (const query of [
      { actionType: 'create,delete' },
      { fieldName: 'name' },
      { resourceKind: 'x.thing', sortField: 'createdAt', sortDir: 'asc' },
      { sortField: 'user', sortDir: 'asc' },
      { actorUserId: editor.user.id },
      { before: new Date(Date.now() - 3_600_000).toISOString() },
    ]) {
      const rows = rowsOf(await exportCsv(admin.auth, query).expect(200));
      expect(rows).toEqual(expectedRows(await listed(admin.auth, query)));
    }
  });

  it('limit picks the first entries; default and cap 1000', async () => {
    const two = rowsOf(await exportCsv(admin.auth, { limit: 2 }).expect(200));
    expect(two).toEqual(expectedRows((await listed(admin.auth)).slice(0, 2)));

    const big = await f.tenant();
    const viewer = await f.loggedInUser(t, { features: ['audit_logs.view_self', 'audit_logs.view_tenant'] }, big);
    await ds.query(
      `INSERT INTO action_logs (tenant_id, actor_user_id, command_id, action_type, changes, created_at)
       SELECT $1, $2, 'bulk.create', 'create', '{}', now() - make_interval(secs => g) FROM generate_series(1, 1005) AS g`,
      [big.id, viewer.user.id],
    );
    expect(rowsOf(await exportCsv(viewer.auth).expect(200))).toHaveLength(1000);
    expect(rowsOf(await exportCsv(viewer.auth, { limit: 5000 }).expect(200))).toHaveLength(1000);
    const ten = rowsOf(await exportCsv(viewer.auth, { limit: 10 }).expect(200));
    expect(ten.map((r) => r.When)).toEqual((await listed(viewer.auth, { limit: 10 })).map((e) => e.createdAt));
  });

  it('self visibility: a caller without audit_logs.view_tenant exports only its own entries; another actor is 403', async () => {
    const rows = rowsOf(await exportCsv(editor.auth).expect(200));
    expect(rows).toHaveLength(expectedRows(await listed(editor.auth)).length);
    expect(new Set(rows.map((r) => r.User))).toEqual(new Set(['Édith "the editor", Ørsted']));
    const denied = await request(t.url).get(EXPORT).set(editor.auth).query({ actorUserId: admin.user.id }).expect(403);
    expect(denied.body).toEqual({ error: expect.stringContaining('audit_logs.view_tenant') });
  });

  it('400 {error} on invalid filters, before any CSV is sent', async () => {
    for (const query of [{ actionType: 'nope' }, { before: 'soon' }, { resourceId: 'x' }, { limit: 0 }, { sortField: 'id' }]) {
      const res = await request(t.url).get(EXPORT).set(admin.auth).query(query).expect(400);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.body.error).toEqual(expect.any(String));
    }
  });

  it('403 without audit_logs.view_self', async () => {
    const nobody = await f.loggedInUser(t, { features: ['auth.roles.list'] }, tenant);
    await request(t.url).get(EXPORT).set(nobody.auth).expect(403);
  });

  it('records each export in the access log (accessType export)', async () => {
    const viewer = await f.loggedInUser(t, { features: ['audit_logs.view_self'] }, tenant);
    await exportCsv(viewer.auth, { actionType: 'edit' }).expect(200);
    await t.app.get(AccessLogService).flush();
    const res = await request(t.url).get('/audit_logs/audit-logs/access').set(viewer.auth).query({ accessType: 'export' }).expect(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({
        resourceKind: 'audit_logs.action_log',
        resourceId: null,
        accessType: 'export',
        actorUserId: viewer.user.id,
        fields: COLUMNS,
        context: { format: 'csv', entries: 0, filters: { actionType: ['edit'] } },
      }),
    ]);
  });
});
