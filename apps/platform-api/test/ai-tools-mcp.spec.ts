import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const TOOLS = '/ai_assistant/tools';
const EXECUTE = '/ai_assistant/tools/execute';
const READER = ['ai_assistant.view', 'auth.roles.list'];
const MANAGER = [...READER, 'auth.roles.manage', 'ai_assistant.settings.manage'];

/**
 * GET /ai_assistant/tools, POST /ai_assistant/tools/execute (over a per-caller MCP server) and
 * POST /ai_assistant/session-key: the caller's tools only, read tools run, mutation tools only ever
 * make a pending action, session tokens tie calls to a session and belong to their user.
 */
describe('AI tools over MCP and session keys', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
  });

  const names = (body: { tools: { name: string }[] }) => body.tools.map((tool) => tool.name).sort();

  it('GET /tools lists the caller’s tools as MCP tools: names as models see them, JSON Schema inputs', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const res = await request(t.url).get(TOOLS).set(manager.auth).expect(200);
    expect(names(res.body)).toEqual(['auth__list_roles', 'auth__rename_role']);
    const rename = res.body.tools.find((tool: { name: string }) => tool.name === 'auth__rename_role');
    expect(rename).toMatchObject({
      title: 'auth.rename_role',
      description: expect.stringContaining('pending action'),
      inputSchema: { type: 'object', properties: { roleId: { type: 'string' }, name: { type: 'string' } }, required: ['roleId', 'name'] },
      annotations: { readOnlyHint: false },
      _meta: { toolName: 'auth.rename_role', agentId: 'auth.access_assistant', kind: 'mutation', requiresConfirmation: true },
    });
    for (const tool of res.body.tools) expect(tool.name).toMatch(/^[a-zA-Z0-9_-]+$/);

    const reader = await f.loggedInUser(t, { features: READER });
    expect(names((await request(t.url).get(TOOLS).set(reader.auth).expect(200)).body)).toEqual(['auth__list_roles']);
    const bare = await f.loggedInUser(t, { features: ['ai_assistant.view'] });
    expect((await request(t.url).get(TOOLS).set(bare.auth).expect(200)).body).toEqual({ tools: [] });
    const none = await f.loggedInUser(t, { features: ['auth.roles.list'] });
    await request(t.url).get(TOOLS).set(none.auth).expect(403);
    await request(t.url).get(TOOLS).expect(401);
  });

  it('a read-only policy hides the agent’s mutation tools and refuses them (403)', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const role = await f.role(manager.tenant.id);
    await request(t.url)
      .post('/ai_assistant/ai/agents/auth.access_assistant/mutation-policy')
      .set(manager.auth)
      .send({ mutationPolicy: 'read-only' })
      .expect(200);
    expect(names((await request(t.url).get(TOOLS).set(manager.auth).expect(200)).body)).toEqual(['auth__list_roles']);
    const res = await request(t.url)
      .post(EXECUTE)
      .set(manager.auth)
      .send({ toolName: 'auth__rename_role', args: { roleId: role.id, name: 'x' } })
      .expect(403);
    expect(res.body.error).toMatch(/not available/);
    expect(
      Number((await ds.query('SELECT count(*)::int AS n FROM ai_pending_actions WHERE tenant_id = $1', [manager.tenant.id]))[0].n),
    ).toBe(0);
  });

  it('a read tool runs: 201 {ok, result}, the caller’s tenant only', async () => {
    const reader = await f.loggedInUser(t, { features: READER });
    const mine = await f.role(reader.tenant.id, {}, { name: `Mine ${randomUUID().slice(0, 6)}` });
    const other = await f.tenant();
    const theirs = await f.role(other.id, {}, { name: `Theirs ${randomUUID().slice(0, 6)}` });
    const res = await request(t.url).post(EXECUTE).set(reader.auth).send({ toolName: 'auth__list_roles', args: {} }).expect(201);
    expect(Object.keys(res.body).sort()).toEqual(['ok', 'result']);
    const ids = res.body.result.items.map((r: { id: string }) => r.id);
    expect(ids).toContain(mine.id);
    expect(ids).not.toContain(theirs.id);
    // Dotted names work too; args narrow the search.
    const filtered = await request(t.url)
      .post(EXECUTE)
      .set(reader.auth)
      .send({ toolName: 'auth.list_roles', args: { search: mine.name } })
      .expect(201);
    expect(filtered.body.result).toEqual({ items: [{ id: mine.id, name: mine.name }] });
  });

  it('a mutation tool never runs: 201 {ok, pendingActionId}; the same proposal again is the same action', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const role = await f.role(manager.tenant.id, {}, { name: `Before ${randomUUID().slice(0, 6)}` });
    const call = () =>
      request(t.url)
        .post(EXECUTE)
        .set(manager.auth)
        .send({ toolName: 'auth__rename_role', args: { roleId: role.id, name: 'After' } });
    const first = await call().expect(201);
    expect(first.body).toEqual({ ok: true, pendingActionId: expect.any(String) });
    expect((await ds.query('SELECT name FROM roles WHERE id = $1', [role.id]))[0].name).toBe(role.name);
    const action = await request(t.url).get(`/ai_assistant/ai/actions/${first.body.pendingActionId}`).set(manager.auth).expect(200);
    expect(action.body).toMatchObject({
      status: 'pending',
      toolName: 'auth.rename_role',
      fieldDiff: { name: { from: role.name, to: 'After' } },
    });
    expect((await call().expect(201)).body.pendingActionId).toBe(first.body.pendingActionId);
  });

  it('errors: invalid arguments 400, unknown tool or agent 404, a tool the caller may not use 403, another tenant’s role 404', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const reader = await f.loggedInUser(t, { features: READER }, manager.tenant);
    const role = await f.role(manager.tenant.id);
    const send = (auth: Record<string, string>, body: object) => request(t.url).post(EXECUTE).set(auth).send(body);
    for (const args of [{ roleId: 'not-a-uuid', name: 'x' }, { roleId: role.id }, { roleId: role.id, name: 'x', extra: 1 }]) {
      const res = await send(manager.auth, { toolName: 'auth__rename_role', args }).expect(400);
      expect(res.body.error).toMatch(/Invalid arguments for tool auth__rename_role/);
    }
    await send(manager.auth, { toolName: 'auth__list_roles', args: { search: 5 } }).expect(400);
    await send(manager.auth, {}).expect(400);
    await send(manager.auth, { toolName: 'auth__list_roles', args: ['x'] }).expect(400);
    await send(manager.auth, { toolName: 'rm -rf' }).expect(400);
    expect((await send(manager.auth, { toolName: 'auth__nothing' }).expect(404)).body).toEqual({ error: 'tool not found' });
    await send(manager.auth, { toolName: 'auth__list_roles', agentId: 'ghost.agent' }).expect(404);
    await send(manager.auth, { toolName: 'auth__list_roles', agentId: 'auth.access_summary' }).expect(404);
    await send(reader.auth, { toolName: 'auth__rename_role', args: { roleId: role.id, name: 'x' } }).expect(403);
    const other = await f.tenant();
    const theirs = await f.role(other.id);
    expect((await send(manager.auth, { toolName: 'auth__rename_role', args: { roleId: theirs.id, name: 'x' } }).expect(404)).body).toEqual({
      error: 'role not found',
    });
    expect(
      Number((await ds.query('SELECT count(*)::int AS n FROM ai_pending_actions WHERE tenant_id = $1', [manager.tenant.id]))[0].n),
    ).toBe(0);
  });

  it('crafted bodies: too many argument elements are 400, a body over 64 kB is 413', async () => {
    const reader = await f.loggedInUser(t, { features: READER });
    const wide = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i]));
    const res = await request(t.url).post(EXECUTE).set(reader.auth).send({ toolName: 'auth__list_roles', args: wide }).expect(400);
    expect(res.body.error).toMatch(/maximum of 2000 elements/);
    await request(t.url)
      .post(EXECUTE)
      .set(reader.auth)
      .send({ toolName: 'auth__list_roles', args: { search: 'x'.repeat(70_000) } })
      .expect(413);
    // A regex-hostile search is a plain substring.
    const hostile = await request(t.url)
      .post(EXECUTE)
      .set(reader.auth)
      .send({ toolName: 'auth__list_roles', args: { search: '(a+)+$%_\\' } })
      .expect(201);
    expect(hostile.body.result).toEqual({ items: [] });
  });

  it('POST /session-key: 200 {sessionToken, expiresAt}, only a hash stored, two hours', async () => {
    const reader = await f.loggedInUser(t, { features: READER });
    const res = await request(t.url).post('/ai_assistant/session-key').set(reader.auth).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'sessionToken']);
    expect(res.body.sessionToken).toMatch(/^aisk_[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(res.body.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(7190_000);
    expect(lifetime).toBeLessThanOrEqual(7200_000);
    const rows = await ds.query('SELECT token_hash, user_id, tenant_id FROM ai_session_keys WHERE user_id = $1', [reader.user.id]);
    expect(rows).toEqual([
      {
        token_hash: createHash('sha256').update(res.body.sessionToken).digest('hex'),
        user_id: reader.user.id,
        tenant_id: reader.tenant.id,
      },
    ]);
    const second = await request(t.url).post('/ai_assistant/session-key').set(reader.auth).expect(200);
    expect(second.body.sessionToken).not.toBe(res.body.sessionToken);
    const blind = await f.loggedInUser(t, { features: ['auth.roles.list'] });
    await request(t.url).post('/ai_assistant/session-key').set(blind.auth).expect(403);
    await request(t.url).post('/ai_assistant/session-key').expect(401);
  });

  it('the OpenAPI document describes the actions, policy, tools and session-key routes', async () => {
    const doc = (await request(t.url).get('/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
    expect(methods('/ai_assistant/ai/actions/{id}')).toEqual(['get']);
    expect(methods('/ai_assistant/ai/actions/{id}/cancel')).toEqual(['post']);
    expect(methods('/ai_assistant/ai/actions/{id}/confirm')).toEqual(['post']);
    expect(methods('/ai_assistant/ai/agents/{agentId}/mutation-policy')).toEqual(['delete', 'get', 'post']);
    expect(methods('/ai_assistant/ai/agents/{agentId}/prompt-override')).toEqual(['get', 'post']);
    expect(methods('/ai_assistant/tools')).toEqual(['get']);
    expect(methods('/ai_assistant/tools/execute')).toEqual(['post']);
    expect(methods('/ai_assistant/session-key')).toEqual(['post']);
  });

  it('_sessionToken ties a tool call’s pending action to the session; another user’s, an expired or a forged token is 401', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const colleague = await f.loggedInUser(t, { features: MANAGER }, manager.tenant);
    const role = await f.role(manager.tenant.id);
    const key = async (auth: Record<string, string>) =>
      (await request(t.url).post('/ai_assistant/session-key').set(auth).expect(200)).body.sessionToken as string;
    const token = await key(manager.auth);
    const rename = (auth: Record<string, string>, args: object, query = '') =>
      request(t.url)
        .post(`${EXECUTE}${query}`)
        .set(auth)
        .send({ toolName: 'auth__rename_role', args: { roleId: role.id, name: 'Session rename', ...args } });
    const res = await rename(manager.auth, { _sessionToken: token }).expect(201);
    const [session] = await ds.query('SELECT id FROM ai_session_keys WHERE token_hash = $1', [
      createHash('sha256').update(token).digest('hex'),
    ]);
    const [action] = await ds.query('SELECT session_id FROM ai_pending_actions WHERE id = $1', [res.body.pendingActionId]);
    expect(action.session_id).toBe(session.id);
    // As a query parameter: the same session, so the same pending proposal.
    expect((await rename(manager.auth, {}, `?_sessionToken=${token}`).expect(201)).body.pendingActionId).toBe(res.body.pendingActionId);
    // Without it: another proposal (no session).
    expect((await rename(manager.auth, {}).expect(201)).body.pendingActionId).not.toBe(res.body.pendingActionId);

    const refused = async (auth: Record<string, string>, sessionToken: unknown) => {
      const r = await rename(auth, { _sessionToken: sessionToken });
      expect([r.status, r.body.code]).toEqual([401, 'invalid_session_token']);
    };
    await refused(colleague.auth, token);
    await refused(manager.auth, `aisk_${'A'.repeat(43)}`);
    await refused(manager.auth, 'garbage');
    await ds.query(`UPDATE ai_session_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [session.id]);
    await refused(manager.auth, token);
    await rename(manager.auth, { _sessionToken: 42 }).expect(400);
    const fresh = await key(manager.auth);
    await rename(manager.auth, { _sessionToken: fresh }, `?_sessionToken=${token}`).expect(400);
  });
});
