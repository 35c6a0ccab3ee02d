import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { fuzzCoverageGaps, fuzzSelfTestMisses, FuzzSelfTestModule, fuzzWholeApp } from '@app/service-kit/testing';
import type { FuzzOperation, FuzzResponse, OpenApiDocument } from '@app/service-kit/testing';
import { AuthService } from '../src/modules/auth/auth.service.js';
import { Factories, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * Issue #19, 2 and #29, 6: every operation of /openapi.json called with generated bad input, as a
 * super administrator (so the fuzzer reaches every handler), and every route of the app's Express
 * route table must be one of those operations. Ids (path and query) are real ids of the kind the
 * route names. No answer may be a 5xx; every 4xx is `{error}` (or `{ok: false, error}` on the routes
 * platform-api.md names), with `code` and `details` the only other fields; every 2xx body fits its
 * documented schema. Small in `npm test`; `npm run fuzz` runs the same with FUZZ_RUNS=150.
 */

/** The UTC day `days` from today, as YYYY-MM-DD. */
const isoDay = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

const ERROR_FIELDS = new Set(['ok', 'error', 'code', 'details']);

export function platformErrorShapeProblem(res: FuzzResponse): string | null {
  if (!res.contentType.includes('application/json')) return `content type ${res.contentType}`;
  const body = res.body as Record<string, unknown> | null;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'not an object';
  // POST /ai_assistant/mcp speaks JSON-RPC: the MCP transport's own refusals (406, 415, parse errors) are
  // JSON-RPC error objects, as the protocol requires; the platform's 401/403/413 there are `{error}`.
  if (body.jsonrpc === '2.0') return jsonRpcErrorProblem(body);
  if (typeof body.error !== 'string' || body.error.length === 0) return 'error is not a string';
  if ('ok' in body && body.ok !== false) return 'ok is not false';
  if ('code' in body && typeof body.code !== 'string') return 'code is not a string';
  const extra = Object.keys(body).filter((k) => !ERROR_FIELDS.has(k));
  return extra.length > 0 ? `unexpected fields ${extra.join(', ')}` : null;
}

function jsonRpcErrorProblem(body: Record<string, unknown>): string | null {
  const error = body.error as { code?: unknown; message?: unknown } | undefined;
  if (!error || typeof error.code !== 'number' || typeof error.message !== 'string')
    return 'a JSON-RPC answer without {code, message} error';
  return Object.keys(body).every((k) => ['jsonrpc', 'error', 'id'].includes(k)) ? null : 'unexpected JSON-RPC fields';
}

describe('fuzzing every platform-api operation from its OpenAPI document (issue #19, #29)', () => {
  let t: PlatformTestApp;
  let doc: OpenApiDocument;
  let user: { email: string; password: string };
  /** Real values per parameter name, then per route family (the longest matching path prefix wins). */
  let common: Record<string, string[]>;
  const byPrefix: [string, Record<string, string[]>][] = [];

  beforeAll(async () => {
    t = await startPlatformApp({ extraModules: [FuzzSelfTestModule] });
    doc = (await request(t.url).get('/openapi.json').expect(200)).body as OpenApiDocument;
    const ds = t.app.get(DataSource);
    const f = Factories.of(t);
    const admin = await f.loggedInUser(t, { isSuperAdmin: true });
    user = admin.user;
    const auth = admin.auth;
    const tenantId = admin.tenant.id;
    const ok = (res: request.Response, what: string): request.Response => {
      if (res.status >= 300) throw new Error(`fixture ${what}: ${res.status} ${JSON.stringify(res.body)}`);
      return res;
    };
    // Writes aim at resources other than the caller's own tenant, organization and account, so a fuzzed
    // deactivation or deletion cannot lock the caller out for the rest of the run.
    const otherTenant = await f.tenant();
    const org = ok(await request(t.url).post('/directory/organizations').set(auth).send({ name: 'fuzz org', tenantId }), 'organization');
    const role = ok(await request(t.url).post('/auth/roles').set(auth).send({ name: 'fuzz-role', tenantId }), 'role');
    const other = await f.user(admin.tenant, { roleIds: [role.body.id] });
    ok(
      await request(t.url)
        .post('/notifications')
        .set(auth)
        .send({ recipientUserId: admin.user.id, type: 'fuzz', title: 'fuzz', severity: 'info' }),
      'notification',
    );
    const [notification] = await ds.query(`SELECT id FROM notifications WHERE tenant_id = $1 AND type = 'fuzz'`, [tenantId]);
    const variant = ok(await request(t.url).post('/auth/sidebar/variants').set(auth).send({ name: 'fuzz', settings: {} }), 'variant');
    const upload = ok(
      await request(t.url)
        .post('/attachments')
        .set(auth)
        .field('entityId', 'crm:person')
        .field('recordId', other.id)
        .attach('file', Buffer.from('fuzz file'), { filename: 'fuzz.txt', contentType: 'text/plain' }),
      'attachment',
    );
    const proposal = ok(
      await request(t.url)
        .post('/ai_assistant/tools/execute')
        .set(auth)
        .send({ toolName: 'auth.rename_role', args: { roleId: role.body.id, name: 'fuzz-renamed' } }),
      'pending action',
    );
    const [{ slug }] = await ds.query(`SELECT slug FROM organizations WHERE id = $1`, [org.body.id]);
    const [log] = await ds.query(`SELECT id FROM action_logs WHERE tenant_id = $1 ORDER BY created_at DESC LIMIT 1`, [tenantId]);
    const sessionId = randomUUID();
    await ds.query(
      `INSERT INTO ai_usage_events (tenant_id, user_id, agent_id, provider_id, model_id, session_id, step_index, input_tokens, output_tokens)
       VALUES ($1, $2, 'auth.access_assistant', 'openai', 'gpt-4o-mini', $3, 0, 10, 5)`,
      [tenantId, admin.user.id, sessionId],
    );
    const variantId = variant.body.variant?.id as string;
    const attachmentId = upload.body.item?.id as string;
    const fixtures = {
      variantId,
      attachmentId,
      pendingActionId: proposal.body.pendingActionId,
      notification: notification?.id,
      log: log?.id,
    };
    expect(fixtures).toEqual({
      variantId: expect.any(String),
      attachmentId: expect.any(String),
      pendingActionId: expect.any(String),
      notification: expect.any(String),
      log: expect.any(String),
    });
    common = {
      tenantId: [tenantId],
      organizationId: [org.body.id, admin.tenant.organizationId],
      roleId: [role.body.id],
      userId: [other.id],
      agentId: ['auth.access_assistant'],
      sessionId: [sessionId],
      entityId: ['crm:person'],
      slug: [slug],
      recordId: [other.id],
      variantId: [variantId],
      logId: [log.id],
      undoToken: [role.headers['x-undo-token'] ?? ''],
    };
    byPrefix.push(
      ['/auth/roles', { id: [role.body.id] }],
      ['/auth/users', { id: [other.id] }],
      ['/directory/organizations', { id: [org.body.id] }],
      ['/directory/tenants', { id: [otherTenant.id] }],
      ['/notifications', { id: [notification.id], ids: [notification.id] }],
      ['/attachments', { id: [attachmentId] }],
      ['/ai_assistant/ai/actions', { id: [proposal.body.pendingActionId] }],
      ['/auth/sidebar', { id: [variantId] }],
      ['/audit_logs', { id: [log.id] }],
      // The usage reports need a range (at most 366 days) covering the fixture's usage row, and a page.
      ['/ai_assistant/usage', { from: [isoDay(-30)], to: [isoDay(1)], limit: ['20'], offset: ['0'] }],
    );
    byPrefix.sort((x, y) => y[0].length - x[0].length);
  });
  afterAll(async () => {
    await t?.close();
  });

  const knownIds = (operation: FuzzOperation) => ({
    ...common,
    ...(byPrefix.find(([prefix]) => operation.path.startsWith(prefix))?.[1] ?? {}),
  });

  /**
   * One session per operation, renewed after a 401 (a fuzzed logout or password change ended it):
   * a login per request (argon2id, by design ~20-40 ms of CPU) was most of a platform case's cost.
   */
  const sessions = new Map<string, Record<string, string>>();
  async function sessionFor(operation: FuzzOperation, previous: FuzzResponse | null): Promise<Record<string, string>> {
    const key = `${operation.method} ${operation.path}`;
    const cached = sessions.get(key);
    if (cached && previous?.status !== 401) return cached;
    const { token } = await t.app
      .get(AuthService)
      .login({ email: user.email, password: user.password, remember: false }, { ip: testIp(), userAgent: null });
    const headers = { Authorization: `Bearer ${token}` };
    sessions.set(key, headers);
    return headers;
  }

  it('self-test: a route that throws is a 500 finding, a 2xx off its schema a schema finding (the fuzzer can fail)', async () => {
    const misses = await fuzzSelfTestMisses({ baseUrl: t.url, headers: sessionFor, errorShapeProblem: platformErrorShapeProblem });
    expect(misses).toEqual([]);
  });

  it('fuzzes every route of the route table: no 5xx, only the documented error bodies, 2xx bodies fit their schema', async () => {
    const result = await fuzzWholeApp(
      { baseUrl: t.url, doc, headers: sessionFor, knownIds, errorShapeProblem: platformErrorShapeProblem },
      6,
    );
    // Tied to the app: a route served but not in /openapi.json (so not fuzzed) fails here. Every read
    // that documents a JSON 2xx answered one (its plain request runs first) and its body was checked
    // against the schema (readsNotSchemaChecked lists the reads whose documented schema never ran).
    expect(fuzzCoverageGaps(t.app, doc, result)).toEqual({ findings: [], unfuzzed: [], readsNotSchemaChecked: [], undocumented2xx: [] });
  }, 600_000);
});
