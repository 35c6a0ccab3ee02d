import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { routeTable, type RouteEntry } from '@app/service-kit/testing';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * Issue #19, 3: tenant isolation, generated from the app's route table. Tenant A owns a role, a user,
 * an organization, a notification, a sidebar variant and action-log entries, all named with one
 * marker. A user of tenant B who holds every feature (`*`, not a super administrator) then calls
 * every authenticated route: the GET routes plainly and with A's ids in every id-like query field,
 * the writes with bodies naming A's resources. Nothing may answer A's marker, no write may be
 * accepted, and no row of tenant A may change (a digest of every tenant-owned table, before and
 * after). A write route the tables below do not cover fails the test.
 */

/** Routes that need no authentication, and why. */
const PUBLIC_ROUTES = new Set([
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'POST /auth/login',
  'POST /auth/reset',
  'POST /auth/reset/confirm',
  'POST /auth/session/refresh',
  'GET /auth/session/refresh',
  'POST /auth/feature-check',
  'GET /auth/locale',
  'POST /auth/locale',
  'GET /directory/tenants/lookup',
  'GET /directory/organizations/lookup',
]);
const PUBLIC_PREFIXES = [
  'GET /docs',
  'GET /openapi',
  'GET /admin/queues',
  'POST /admin/queues',
  'PUT /admin/queues',
  'DELETE /admin/queues',
  'PATCH /admin/queues',
  'GET /attachments/file',
  'GET /attachments/image',
];

const A_ATTACHMENT_ENTITY = 'crm:person';

interface TenantA {
  tenantId: string;
  organizationId: string;
  roleId: string;
  userId: string;
  notificationId: string;
  variantId: string;
  undoToken: string;
  attachmentId: string;
  pendingActionId: string;
  actionLogId: string;
  usageSessionId: string;
  secondOrganizationId: string;
}

/** B's write bodies that name A's resources; each must be refused. */
type CrossTenantWrite = {
  query?: Record<string, string>;
  body?: object;
  /** A's id in the body is ignored and the write lands in B's own tenant (the digest proves A is untouched). */ createsOwn?: boolean;
};
const CROSS_TENANT_WRITES: Record<string, (a: TenantA) => CrossTenantWrite> = {
  'POST /auth/roles': (a) => ({ body: { name: 'b-role', tenantId: a.tenantId }, createsOwn: true }),
  'PUT /auth/roles': (a) => ({ body: { id: a.roleId, name: 'b-renamed' } }),
  'DELETE /auth/roles': (a) => ({ query: { id: a.roleId } }),
  'PUT /auth/roles/acl': (a) => ({ body: { roleId: a.roleId, features: ['*'] } }),
  'POST /auth/users': (a) => ({
    body: {
      email: `b-${randomUUID().slice(0, 6)}@b.example.com`,
      password: 'password-123',
      roleIds: [a.roleId],
      organizationId: a.organizationId,
      tenantId: a.tenantId,
    },
  }),
  'PUT /auth/users': (a) => ({ body: { id: a.userId, name: 'b-renamed' } }),
  'DELETE /auth/users': (a) => ({ query: { id: a.userId } }),
  'PUT /auth/users/acl': (a) => ({ body: { userId: a.userId, features: ['*'] } }),
  'POST /auth/users/consents': (a) => ({ body: { userId: a.userId, consentType: 'marketing', isGranted: true } }),
  'POST /auth/users/resend-invite': (a) => ({ body: { id: a.userId } }),
  'POST /directory/organizations': (a) => ({ body: { name: 'b-org', tenantId: a.tenantId }, createsOwn: true }),
  'PUT /directory/organizations': (a) => ({ body: { id: a.organizationId, name: 'b-renamed' } }),
  'DELETE /directory/organizations': (a) => ({ query: { id: a.organizationId } }),
  'PUT /directory/tenants': (a) => ({ body: { id: a.tenantId, name: 'b-renamed', isActive: false } }),
  'DELETE /directory/tenants': (a) => ({ query: { id: a.tenantId } }),
  'POST /notifications': (a) => ({ body: { recipientUserId: a.userId, type: 'x', title: 'from b', severity: 'info' } }),
  'POST /notifications/batch': (a) => ({ body: { recipientUserIds: [a.userId], type: 'x', title: 'from b', severity: 'info' } }),
  'POST /notifications/role': (a) => ({ body: { roleId: a.roleId, type: 'x', title: 'from b', severity: 'info' } }),
  'PUT /notifications/:id/read': () => ({}),
  'PUT /notifications/:id/dismiss': () => ({}),
  'PUT /notifications/:id/restore': () => ({ body: { status: 'unread' } }),
  'POST /notifications/:id/action': () => ({ body: { actionId: 'open' } }),
  'POST /audit_logs/audit-logs/actions/undo': (a) => ({ body: { undoToken: a.undoToken } }),
  'POST /audit_logs/audit-logs/actions/redo': (a) => ({ body: { logId: a.actionLogId } }),
  'POST /auth/sidebar/variants': (a) => ({ body: { id: a.variantId, name: 'b-variant', settings: {} }, createsOwn: true }),
  'DELETE /auth/sidebar/preferences': (a) => ({ query: { roleId: a.roleId } }),
  'POST /ai_assistant/tools/execute': (a) => ({ body: { toolName: 'auth.rename_role', args: { roleId: a.roleId, name: 'b-renamed' } } }),
  'POST /ai_assistant/ai/actions/:id/cancel': () => ({ body: {} }),
  'POST /ai_assistant/ai/actions/:id/confirm': () => ({}),
  'DELETE /attachments': (a) => ({ query: { id: a.attachmentId } }),
};

/**
 * The refusal each cross-tenant write gets (platform-api.md: 404 for a resource outside the caller's
 * tenant, 403 where the caller may not act at all, 400 where the spec names a domain refusal).
 */
const CROSS_TENANT_WRITE_STATUS: Record<string, number> = {
  'PUT /auth/roles': 404,
  'DELETE /auth/roles': 404,
  'PUT /auth/roles/acl': 404,
  // Naming another tenant is for super administrators only (decisions.md, users).
  'POST /auth/users': 403,
  'PUT /auth/users': 404,
  'DELETE /auth/users': 404,
  'PUT /auth/users/acl': 404,
  'POST /auth/users/consents': 404,
  'POST /auth/users/resend-invite': 404,
  'PUT /directory/organizations': 404,
  'DELETE /directory/organizations': 404,
  'PUT /directory/tenants': 404,
  // Tenants are managed by super administrators only.
  'DELETE /directory/tenants': 403,
  'POST /notifications': 404,
  'POST /notifications/batch': 404,
  'POST /notifications/role': 404,
  'PUT /notifications/:id/read': 404,
  'PUT /notifications/:id/dismiss': 404,
  'PUT /notifications/:id/restore': 404,
  'POST /notifications/:id/action': 404,
  'POST /audit_logs/audit-logs/actions/undo': 400,
  'POST /audit_logs/audit-logs/actions/redo': 400,
  'DELETE /auth/sidebar/preferences': 404,
  'POST /ai_assistant/tools/execute': 404,
  'POST /ai_assistant/ai/actions/:id/cancel': 404,
  'POST /ai_assistant/ai/actions/:id/confirm': 404,
  'DELETE /attachments': 404,
};

/** GET routes that name one resource of A's, and the documented refusal for another tenant. */
const ID_READS: Record<string, { query?: (a: TenantA) => Record<string, string>; status: number }> = {
  'GET /auth/roles/acl': { query: (a) => ({ roleId: a.roleId }), status: 404 },
  'GET /auth/users/acl': { query: (a) => ({ userId: a.userId }), status: 404 },
  'GET /auth/users/consents': { query: (a) => ({ userId: a.userId }), status: 404 },
  'GET /auth/sidebar/preferences': { query: (a) => ({ roleId: a.roleId }), status: 404 },
  'GET /ai_assistant/ai/actions/:id': { status: 404 },
  'GET /ai_assistant/usage/sessions/:sessionId': { status: 404 },
  'GET /attachments/file/:id': { status: 404 },
};

/**
 * Same tenant, other organization (decisions.md: a caller restricted to organizations gets 403 for a
 * request scoped to another organization; a user outside its organizations is not found, 404).
 */
const CROSS_ORGANIZATION: Record<string, { req: (a: TenantA) => CrossTenantWrite; status: number }> = {
  'GET /audit_logs/audit-logs/actions': { req: (a) => ({ query: { organizationId: a.organizationId } }), status: 403 },
  'GET /audit_logs/audit-logs/access': { req: (a) => ({ query: { organizationId: a.organizationId } }), status: 403 },
  'GET /auth/users/acl': { req: (a) => ({ query: { userId: a.userId } }), status: 404 },
  'PUT /auth/users/acl': { req: (a) => ({ body: { userId: a.userId, features: ['*'] } }), status: 404 },
  'PUT /auth/users': { req: (a) => ({ body: { id: a.userId, name: 'other-org' } }), status: 403 },
  'DELETE /auth/users': { req: (a) => ({ query: { id: a.userId } }), status: 403 },
  'POST /auth/users': {
    req: (a) => ({
      body: { email: `o-${randomUUID().slice(0, 6)}@a.example.com`, password: 'password-123', organizationId: a.organizationId },
    }),
    status: 403,
  },
  'PUT /directory/organizations': { req: (a) => ({ body: { id: a.organizationId, name: 'other-org' } }), status: 403 },
  'DELETE /directory/organizations': { req: (a) => ({ query: { id: a.organizationId } }), status: 403 },
};

/**
 * Super administrators reach across tenants where the spec says so (platform-api.md: roles across
 * tenants in the role list; decisions.md: users and organizations "with the conventions of roles",
 * a user "in any tenant" for ACLs). What stays private to a tenant even for them is checked below.
 */
const SUPER_ADMIN_REACH: Record<string, string> = {
  'GET /auth/roles': 'roles across tenants in the role list (platform-api.md)',
  'GET /auth/users': 'users follow the conventions of roles (decisions.md)',
  'GET /directory/organizations': 'organizations follow the conventions of roles (decisions.md)',
};
const SUPER_ADMIN_ID_READS: Record<string, number> = {
  'GET /auth/users/acl': 200,
  'GET /auth/users/consents': 200,
};
/** A tenant's private resources: a super administrator of another tenant gets the same refusal as B. */
const PRIVATE_WRITES = [
  'PUT /notifications/:id/read',
  'PUT /notifications/:id/dismiss',
  'PUT /notifications/:id/restore',
  'POST /notifications/:id/action',
  'DELETE /attachments',
  'POST /ai_assistant/ai/actions/:id/cancel',
  'POST /ai_assistant/ai/actions/:id/confirm',
  'POST /audit_logs/audit-logs/actions/undo',
  'POST /audit_logs/audit-logs/actions/redo',
];

/** Writes that act only on the caller's own tenant, session or account by construction, and why. */
const OWN_TENANT_ONLY: Record<string, string> = {
  'POST /auth/logout': "ends the caller's session",
  'GET /auth/logout': "ends the caller's session",
  'PUT /auth/profile': "changes the caller's own account",
  'PUT /auth/sidebar/preferences': "the caller's own preferences",
  'PUT /notifications/mark-all-read': "the caller's own notifications",
  'POST /notifications/feature': "fans out to holders of a feature in the caller's tenant",
  'POST /notifications/settings': "the caller tenant's delivery settings",
  'POST /directory/tenants': 'creates a new tenant (super administrators only)',
  'POST /ai_assistant/ai/agents/:agentId/mutation-policy': "the caller tenant's override of a code-declared agent",
  'DELETE /ai_assistant/ai/agents/:agentId/mutation-policy': "the caller tenant's override of a code-declared agent",
  'POST /ai_assistant/ai/agents/:agentId/prompt-override': "a new version in the caller's tenant and organization",
  'POST /ai_assistant/session-key': 'a key bound to the calling user',
  'POST /ai_assistant/mcp': "MCP tools of the key's own tenant (cross-tenant keys: ai-mcp-http.spec)",
  'DELETE /ai_assistant/mcp': 'no session to end on a stateless server (405 after authentication)',
  'POST /attachments': "stores a file in the caller's tenant (entityId and recordId are free-form labels)",
  'PUT /ai_assistant/ai/agents/:agentId/loop-override': "the caller tenant's override of a code-declared agent",
  'DELETE /ai_assistant/ai/agents/:agentId/loop-override': "the caller tenant's override of a code-declared agent",
  'PUT /ai_assistant/settings': "the caller tenant's runtime settings",
  'DELETE /ai_assistant/settings': "the caller tenant's runtime settings",
  'PUT /ai_assistant/settings/allowlist': "the caller tenant's provider allowlist",
  'DELETE /ai_assistant/settings/allowlist': "the caller tenant's provider allowlist",
  'POST /ai_assistant/ai/chat': "runs an agent whose tools read and preview through the caller's scope",
  'POST /ai_assistant/ai/run-object': "runs an agent in the caller's scope",
  'POST /ai_assistant/chat': "runs an agent whose tools read and preview through the caller's scope",
  'POST /ai_assistant/route': "routes the caller's query; reads no other tenant",
};

describe('tenant isolation matrix over every route (issue #19)', () => {
  let t: PlatformTestApp;
  let routes: RouteEntry[];
  let a: TenantA;
  let authB: Record<string, string>;
  /** A super administrator of tenant B: all features and organizations, of its own tenant. */
  let authSuperB: Record<string, string>;
  /** A user of tenant A with every feature, restricted to A's second organization. */
  let authOtherOrg: Record<string, string>;
  let ds: DataSource;
  const marker = `iso${randomUUID().replace(/-/g, '').slice(0, 12)}`;

  /**
   * A digest of tenant A: every row in every table with a tenant_id column, the `tenants` row itself,
   * and every stored attachment file (path and SHA-256 of the bytes under the local storage root).
   */
  async function tenantDigest(tenantId: string): Promise<Record<string, string>> {
    const tables: { table_name: string }[] = await ds.query(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'tenant_id' AND table_name NOT IN ('sessions') ORDER BY 1`,
    );
    const digest: Record<string, string> = {};
    for (const { table_name } of tables) {
      const [row] = await ds.query(
        `SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS d FROM "${table_name}" x WHERE tenant_id = $1`,
        [tenantId],
      );
      digest[table_name] = row.d;
    }
    const [tenant] = await ds.query(`SELECT md5(x::text) AS d FROM tenants x WHERE id = $1`, [tenantId]);
    digest['tenants (the row)'] = tenant.d;
    digest['attachment files'] = storedFilesDigest(t.config.attachmentsRoot);
    return digest;
  }

  /** Path and SHA-256 of every file under the storage root (resized-image caches and temp files included). */
  function storedFilesDigest(root: string): string {
    const files = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name))
      .sort();
    const hash = createHash('sha256');
    for (const file of files)
      hash.update(`${path.relative(root, file)}:${createHash('sha256').update(readFileSync(file)).digest('hex')}\n`);
    return `${files.length} files ${hash.digest('hex')}`;
  }

  beforeAll(async () => {
    t = await startPlatformApp();
    ds = t.app.get(DataSource);
    routes = routeTable(t.app);
    const f = Factories.of(t);
    const adminA = await f.loggedInUser(t, { isSuperAdmin: true });
    const authA = adminA.auth;
    const tenantId = adminA.tenant.id;
    const role = await request(t.url)
      .post('/auth/roles')
      .set(authA)
      .send({ name: `${marker}-role`, tenantId });
    const user = await f.user(adminA.tenant, { email: `${marker}@a.example.com`, name: marker, roleIds: [role.body.id] });
    const notification = await request(t.url)
      .post('/notifications')
      .set(authA)
      .send({ recipientUserId: adminA.user.id, type: marker, title: marker, severity: 'info' });
    const variant = await request(t.url)
      .post('/auth/sidebar/variants')
      .set(authA)
      .send({ name: `${marker}-variant`, settings: {} });
    a = {
      tenantId,
      organizationId: adminA.tenant.organizationId,
      roleId: role.body.id,
      userId: user.id,
      notificationId: '',
      variantId: variant.body.variant?.id,
      undoToken: role.headers['x-undo-token'] ?? '',
      attachmentId: '',
      pendingActionId: '',
      actionLogId: '',
      usageSessionId: randomUUID(),
      secondOrganizationId: '',
    };
    await ds.query(`UPDATE organizations SET name = $2 WHERE id = $1`, [a.organizationId, `${marker}-org`]);
    expect(notification.status).toBeLessThan(300);
    const [stored] = await ds.query(`SELECT id FROM notifications WHERE tenant_id = $1 AND type = $2`, [tenantId, marker]);
    a.notificationId = stored.id;
    const [log] = await ds.query(`SELECT id FROM action_logs WHERE tenant_id = $1 ORDER BY created_at DESC LIMIT 1`, [tenantId]);
    a.actionLogId = log.id;
    await ds.query(
      `INSERT INTO ai_usage_events (tenant_id, user_id, agent_id, provider_id, model_id, session_id, step_index, finish_reason)
       VALUES ($1, $2, 'auth.access_assistant', 'openai', $3, $4, 0, 'stop')`,
      [tenantId, adminA.user.id, marker, a.usageSessionId],
    );
    const upload = await request(t.url)
      .post('/attachments')
      .set(authA)
      .field('entityId', A_ATTACHMENT_ENTITY)
      .field('recordId', a.userId)
      .attach('file', Buffer.from(`secret ${marker}`), { filename: `${marker}.txt`, contentType: 'text/plain' });
    a.attachmentId = upload.body.item?.id;
    const proposal = await request(t.url)
      .post('/ai_assistant/tools/execute')
      .set(authA)
      .send({ toolName: 'auth.rename_role', args: { roleId: a.roleId, name: `${marker}-renamed` } });
    a.pendingActionId = proposal.body.pendingActionId;
    const b = await f.loggedInUser(t, { features: ['*'] });
    authB = b.auth;
    authSuperB = (await f.loggedInUser(t, { isSuperAdmin: true }, b.tenant)).auth;
    const [secondOrg] = await ds.query(`INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'Second', $2) RETURNING id`, [
      tenantId,
      `second-${marker}`,
    ]);
    a.secondOrganizationId = secondOrg.id;
    authOtherOrg = (
      await f.loggedInUser(t, { features: ['*'], organizations: [secondOrg.id] }, { id: tenantId, organizationId: secondOrg.id })
    ).auth;
    // Every fixture is real: a missing id would make the routes naming it prove nothing.
    expect(Object.entries(a).filter(([, v]) => typeof v !== 'string' || v === '')).toEqual([]);
  });
  afterAll(async () => {
    await t?.close();
  });

  const isPublic = (r: RouteEntry) => PUBLIC_ROUTES.has(r.key) || PUBLIC_PREFIXES.some((p) => r.key.startsWith(p));
  const authenticated = () => routes.filter((r) => !isPublic(r));
  const call = (
    method: string,
    path: string,
    headers: Record<string, string>,
    req: { query?: Record<string, string>; body?: object } = {},
  ) => {
    let pending = request(t.url)[method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path).set(headers).timeout(5000);
    if (req.query) pending = pending.query(req.query);
    return req.body === undefined ? pending : pending.send(req.body);
  };
  /** A's id of the kind the route names: `:id` of /ai_assistant/ai/actions is a pending action, of /attachments an attachment. */
  const withA = (r: RouteEntry) =>
    r.path.replace(/:(\w+)/g, (_, name: string) => {
      if (name === 'sessionId') return a.usageSessionId;
      if (name !== 'id') return name === 'agentId' ? 'auth.access_assistant' : randomUUID();
      if (r.path.startsWith('/ai_assistant/ai/actions')) return a.pendingActionId;
      if (r.path.startsWith('/attachments')) return a.attachmentId;
      return a.notificationId;
    });

  /** A's real values in every id-like query field, `id` being A's resource of the route's own kind. */
  const aQueryFor = (r: RouteEntry): Record<string, string> => {
    const ownId: [string, string][] = [
      ['/auth/roles', a.roleId],
      ['/auth/users', a.userId],
      ['/directory/organizations', a.organizationId],
      ['/directory/tenants', a.tenantId],
      ['/notifications', a.notificationId],
      ['/attachments', a.attachmentId],
      ['/audit_logs', a.actionLogId],
      ['/auth/sidebar', a.variantId],
    ];
    return {
      id: ownId.find(([prefix]) => r.path.startsWith(prefix))?.[1] ?? a.roleId,
      tenantId: a.tenantId,
      organizationId: a.organizationId,
      roleId: a.roleId,
      userId: a.userId,
      actorUserId: a.userId,
      resourceId: a.roleId,
      ids: a.notificationId,
      // The attachment list is keyed by the labels A's upload really used.
      entityId: A_ATTACHMENT_ENTITY,
      recordId: a.userId,
      sessionId: a.usageSessionId,
    };
  };

  it('every route that is not public refuses a caller without a token', async () => {
    for (const route of authenticated().filter((r) => !r.path.endsWith('/stream'))) {
      const res = await call(route.method, withA(route), {});
      expect({ route: route.key, status: res.status }).toEqual({ route: route.key, status: 401 });
    }
  });

  it("answers none of tenant A's data to tenant B on any GET, plain or with A's ids in every id-like query field", async () => {
    const reads = authenticated().filter((r) => r.method === 'GET' && !r.path.endsWith('/stream') && !r.key.startsWith('GET /auth/logout'));
    expect(reads.length).toBeGreaterThanOrEqual(15);
    for (const route of reads) {
      for (const query of [undefined, aQueryFor(route)]) {
        const res = await call('GET', withA(route), authB, { query });
        const body = typeof res.body === 'object' && Object.keys(res.body ?? {}).length > 0 ? JSON.stringify(res.body) : (res.text ?? '');
        expect({ route: route.key, query: query ? 'A ids' : 'none', leaks: body.includes(marker) }).toEqual({
          route: route.key,
          query: query ? 'A ids' : 'none',
          leaks: false,
        });
      }
    }
  });

  it("serves none of tenant A's private files or images to tenant B", async () => {
    for (const path of [`/attachments/file/${a.attachmentId}`, `/attachments/image/${a.attachmentId}?width=10&height=10`]) {
      const res = await call('GET', path, authB);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.text ?? '').not.toContain(marker);
    }
  });

  it('the fixtures are real: tenant A itself sees its marker, its file and its pending action', async () => {
    const [notification] = await ds.query(`SELECT count(*)::int AS n FROM notifications WHERE id = $1 AND tenant_id = $2`, [
      a.notificationId,
      a.tenantId,
    ]);
    expect(notification.n).toBe(1);
    expect(a.undoToken).not.toBe('');
    const [row] = await ds.query(`SELECT count(*)::int AS n FROM ai_pending_actions WHERE id = $1 AND tenant_id = $2`, [
      a.pendingActionId,
      a.tenantId,
    ]);
    expect(row.n).toBe(1);
    const [file] = await ds.query(`SELECT count(*)::int AS n FROM attachments WHERE id = $1 AND tenant_id = $2`, [
      a.attachmentId,
      a.tenantId,
    ]);
    expect(file.n).toBe(1);
  });

  it("refuses every write of tenant B that names tenant A's resources, and no row of tenant A changes", async () => {
    const writes = authenticated().filter((r) => r.method !== 'GET' || r.key === 'GET /auth/logout');
    const uncovered = writes.filter((r) => !(r.key in CROSS_TENANT_WRITES) && !(r.key in OWN_TENANT_ONLY)).map((r) => r.key);
    expect({ uncoveredWrites: uncovered }).toEqual({ uncoveredWrites: [] });
    const before = await tenantDigest(a.tenantId);
    // The digest can fail: it covers A's rows (an empty digest would prove nothing).
    expect(before.roles).not.toBe('d41d8cd98f00b204e9800998ecf8427e');
    for (const caller of [authB, authSuperB]) {
      const statuses: Record<string, number> = {};
      const covered = (key: string) => key in CROSS_TENANT_WRITES && (caller === authB || PRIVATE_WRITES.includes(key));
      for (const route of writes.filter((r) => covered(r.key))) {
        const write = CROSS_TENANT_WRITES[route.key](a);
        const res = await call(route.method, withA(route), caller, write);
        // The documented refusal by scope; a validation error (400 with details) would prove nothing.
        if (!write.createsOwn) statuses[route.key] = res.status === 400 && 'details' in (res.body ?? {}) ? -400 : res.status;
        expect(JSON.stringify(res.body ?? {})).not.toContain(marker);
      }
      const expected = Object.fromEntries(Object.entries(CROSS_TENANT_WRITE_STATUS).filter(([key]) => covered(key)));
      expect({ caller: caller === authB ? 'B' : 'super admin of B', statuses }).toEqual({
        caller: caller === authB ? 'B' : 'super admin of B',
        statuses: expected,
      });
    }
    expect(await tenantDigest(a.tenantId)).toEqual(before);
  });

  it("answers the documented refusal to B and to B's super administrator on every route naming one of A's resources", async () => {
    const missing = Object.keys(ID_READS).filter((key) => !routes.some((r) => r.key === key));
    expect({ idReadsNotInRouteTable: missing }).toEqual({ idReadsNotInRouteTable: [] });
    for (const caller of [authB, authSuperB]) {
      const statuses: Record<string, number> = {};
      for (const route of routes.filter((r) => r.key in ID_READS)) {
        const res = await call('GET', withA(route), caller, { query: ID_READS[route.key].query?.(a) });
        statuses[route.key] = res.status;
        expect(JSON.stringify(res.body ?? {}) + (res.text ?? '')).not.toContain(marker);
      }
      const expected = Object.fromEntries(
        Object.entries(ID_READS).map(([key, v]) => [key, caller === authSuperB ? (SUPER_ADMIN_ID_READS[key] ?? v.status) : v.status]),
      );
      expect({ caller: caller === authB ? 'B' : 'super admin of B', statuses }).toEqual({
        caller: caller === authB ? 'B' : 'super admin of B',
        statuses: expected,
      });
    }
  });

  it("answers none of tenant A's data to the super administrator of tenant B on any GET, but where its documented reach is", async () => {
    const reads = authenticated().filter((r) => r.method === 'GET' && !r.path.endsWith('/stream') && !r.key.startsWith('GET /auth/logout'));
    const leaks: string[] = [];
    for (const route of reads) {
      for (const query of [undefined, aQueryFor(route)]) {
        const res = await call('GET', withA(route), authSuperB, { query });
        const body = typeof res.body === 'object' && Object.keys(res.body ?? {}).length > 0 ? JSON.stringify(res.body) : (res.text ?? '');
        if (body.includes(marker)) leaks.push(`${route.key} ${query ? 'with A ids' : 'plain'}`);
      }
    }
    const reach = Object.keys(SUPER_ADMIN_REACH).flatMap((key) => [`${key} plain`, `${key} with A ids`]);
    expect({ leaks: leaks.filter((l) => !reach.includes(l)) }).toEqual({ leaks: [] });
  });

  it("refuses a user of A's other organization what is scoped to A's first organization, and nothing of A changes", async () => {
    const missing = Object.keys(CROSS_ORGANIZATION).filter((key) => !routes.some((r) => r.key === key));
    expect({ notInRouteTable: missing }).toEqual({ notInRouteTable: [] });
    const before = await tenantDigest(a.tenantId);
    const statuses: Record<string, number> = {};
    for (const [key, { req }] of Object.entries(CROSS_ORGANIZATION)) {
      const [method, path] = key.split(' ');
      const res = await call(method ?? 'GET', path ?? '/', authOtherOrg, req(a));
      statuses[key] = res.status;
      expect(JSON.stringify(res.body ?? {})).not.toContain(marker);
    }
    const expected = Object.fromEntries(Object.entries(CROSS_ORGANIZATION).map(([key, v]) => [key, v.status]));
    expect(statuses).toEqual(expected);
    expect(await tenantDigest(a.tenantId)).toEqual(before);
  });
});
