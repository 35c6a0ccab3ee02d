import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories, login } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const MCP = '/ai_assistant/mcp';
const READER = ['ai_assistant.view', 'auth.roles.list'];
const MANAGER = [...READER, 'auth.roles.manage'];
type Auth = Record<string, string>;

/**
 * Issue #32 item 1: POST /ai_assistant/mcp is an MCP server over Streamable HTTP, driven here by the
 * SDK's own Client and StreamableHTTPClientTransport over a real socket, authenticated with a session key.
 */
describe('AI assistant: MCP server over HTTP', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await t?.close();
  });

  const sessionKey = async (auth: Auth) =>
    (await request(t.url).post('/ai_assistant/session-key').set(auth).expect(200)).body.sessionToken as string;
  const connect = async (bearer?: string) => {
    const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(MCP, t.url), {
      requestInit: bearer ? { headers: { Authorization: `Bearer ${bearer}` } } : {},
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  const json = (result: unknown) => JSON.parse(((result as CallToolResult).content[0] as { text: string }).text) as Record<string, unknown>;
  const roleName = async (id: string) => (await ds.query('SELECT name FROM roles WHERE id = $1', [id]))[0].name as string;

  it('with a session key: tools/list is the caller’s tools (as GET /tools), a read tool answers JSON text', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const mine = await f.role(manager.tenant.id, {}, { name: `Mine ${randomUUID().slice(0, 6)}` });
    const client = await connect(await sessionKey(manager.auth));
    expect(client.getServerVersion()?.name).toBe('platform-api');

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['auth__list_roles', 'auth__rename_role']);
    const rest = (await request(t.url).get('/ai_assistant/tools').set(manager.auth).expect(200)).body;
    expect(tools).toEqual(rest.tools);

    const result = await client.callTool({ name: 'auth__list_roles', arguments: { search: mine.name } });
    expect(result.isError).toBeFalsy();
    expect(json(result)).toEqual({ items: [{ id: mine.id, name: mine.name }] });
  });

  it('auth.rename_role becomes a pending action tied to the key’s session; the role is unchanged', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const role = await f.role(manager.tenant.id, {}, { name: `Before ${randomUUID().slice(0, 6)}` });
    const key = await sessionKey(manager.auth);
    const client = await connect(key);
    const result = await client.callTool({ name: 'auth__rename_role', arguments: { roleId: role.id, name: 'Renamed over MCP' } });
    expect(result.isError).toBeFalsy();
    const { pendingActionId } = json(result);
    expect(pendingActionId).toEqual(expect.any(String));
    expect(await roleName(role.id)).toBe(role.name);
    const action = await request(t.url)
      .get(`/ai_assistant/ai/actions/${String(pendingActionId)}`)
      .set(manager.auth)
      .expect(200);
    expect(action.body).toMatchObject({
      status: 'pending',
      toolName: 'auth.rename_role',
      targetRecordId: role.id,
      fieldDiff: { name: { from: role.name, to: 'Renamed over MCP' } },
    });
    const [row] = await ds.query(
      'SELECT a.session_id, k.id AS key_id FROM ai_pending_actions a, ai_session_keys k WHERE a.id = $1 AND k.user_id = $2',
      [pendingActionId, manager.user.id],
    );
    expect(row.session_id).toBe(row.key_id);
    // Confirmed by its creator in the platform, it runs.
    await request(t.url)
      .post(`/ai_assistant/ai/actions/${String(pendingActionId)}/confirm`)
      .set(manager.auth)
      .expect(200);
    expect(await roleName(role.id)).toBe('Renamed over MCP');
  });

  it('401 without a key, with a forged, expired or revoked-user key; the SDK client fails to connect', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (auth?: string) => {
      const req = request(t.url).post(MCP).set('Accept', 'application/json, text/event-stream');
      return (auth ? req.set('Authorization', auth) : req).send(init);
    };
    expect((await post().expect(401)).body).toEqual({ error: 'unauthorized' });
    await post(`Bearer aisk_${'A'.repeat(43)}`).expect(401);
    await post('Bearer not-a-jwt').expect(401);
    await post('Basic abc').expect(401);
    await expect(connect()).rejects.toMatchObject({ code: 401 });

    const reader = await f.loggedInUser(t, { features: READER });
    const key = await sessionKey(reader.auth);
    await post(`Bearer ${key}`).expect(200);
    await ds.query(`UPDATE ai_session_keys SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [reader.user.id]);
    await post(`Bearer ${key}`).expect(401);
    const other = await f.loggedInUser(t, { features: READER });
    const otherKey = await sessionKey(other.auth);
    await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [other.user.id]);
    await post(`Bearer ${otherKey}`).expect(401);
    // The browser's cookie is not accepted (no cross-site requests riding on it).
    await request(t.url)
      .post(MCP)
      .set('Cookie', `auth_token=${reader.auth.Authorization.slice(7)}`)
      .send(init)
      .expect(401);
    // A user's JWT works as the spec allows.
    await post(reader.auth.Authorization).expect(200);
  });

  it('a key ends with the login session that made it (logout, expiry), not with another login of its user', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const secondLogin = { Authorization: `Bearer ${await login(t, manager.user.email, manager.user.password)}` };
    const role = await f.role(manager.tenant.id);
    const ofFirstLogin = await sessionKey(manager.auth);
    const ofSecondLogin = await sessionKey(secondLogin);
    const mcpTools = (key: string) =>
      request(t.url)
        .post(MCP)
        .set('Accept', 'application/json, text/event-stream')
        .set('Authorization', `Bearer ${key}`)
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    // As `_sessionToken` of a tool call made with the user's (other) JWT: the same rule.
    const renameWith = (key: string) =>
      request(t.url)
        .post('/ai_assistant/tools/execute')
        .set(secondLogin)
        .send({ toolName: 'auth__rename_role', args: { roleId: role.id, name: 'Renamed in session', _sessionToken: key } });
    await mcpTools(ofFirstLogin).expect(200);
    await renameWith(ofFirstLogin).expect(201);

    await request(t.url).post('/auth/logout').set(manager.auth).expect(302);
    expect((await mcpTools(ofFirstLogin).expect(401)).body).toEqual({ error: 'invalid or expired session key' });
    expect((await renameWith(ofFirstLogin).expect(401)).body.code).toBe('invalid_session_token');
    // The other login's key still works, until its own session ends (expired, not yet swept).
    await mcpTools(ofSecondLogin).expect(200);
    await renameWith(ofSecondLogin).expect(201);
    await ds.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [manager.user.id]);
    await mcpTools(ofSecondLogin).expect(401);

    // A session that ends while the API still holds it in its session cache: no key for it (401, not a 500).
    const third = await f.loggedInUser(t, { features: READER });
    await sessionKey(third.auth);
    await ds.query('DELETE FROM sessions WHERE user_id = $1', [third.user.id]);
    const late = await request(t.url).post('/ai_assistant/session-key').set(third.auth);
    expect([late.status, late.body]).toEqual([401, { error: 'session expired or revoked' }]);
  });

  it('a key of another tenant sees and touches only its tenant; fewer features, fewer tools; no ai_assistant.view is 403', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const theirs = await f.role(manager.tenant.id, {}, { name: `Theirs ${randomUUID().slice(0, 6)}` });
    const outsider = await f.loggedInUser(t, { features: MANAGER });
    const own = await f.role(outsider.tenant.id, {}, { name: `Own ${randomUUID().slice(0, 6)}` });
    const client = await connect(await sessionKey(outsider.auth));
    const ids = (json(await client.callTool({ name: 'auth__list_roles', arguments: {} })).items as { id: string }[]).map((r) => r.id);
    expect(ids).toContain(own.id);
    expect(ids).not.toContain(theirs.id);
    const rename = await client.callTool({ name: 'auth__rename_role', arguments: { roleId: theirs.id, name: 'hijacked' } });
    expect(rename.isError).toBe(true);
    expect((rename.content as { text: string }[])[0].text).toBe('role not found');
    expect(await roleName(theirs.id)).toBe(theirs.name);

    const reader = await f.loggedInUser(t, { features: READER });
    const readerClient = await connect(await sessionKey(reader.auth));
    expect((await readerClient.listTools()).tools.map((tool) => tool.name)).toEqual(['auth__list_roles']);
    const refused = await readerClient.callTool({ name: 'auth__rename_role', arguments: { roleId: own.id, name: 'x' } });
    expect(refused.isError).toBe(true);
    expect(
      Number((await ds.query('SELECT count(*)::int AS n FROM ai_pending_actions WHERE tenant_id = $1', [reader.tenant.id]))[0].n),
    ).toBe(0);

    const blind = await f.loggedInUser(t, { features: ['auth.roles.list'] });
    await request(t.url)
      .post(MCP)
      .set('Authorization', blind.auth.Authorization)
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
      .expect(403);
  });

  it('crafted input: invalid or oversized arguments are tool errors, a body over 64 kB is 413, GET is 405', async () => {
    const manager = await f.loggedInUser(t, { features: MANAGER });
    const key = await sessionKey(manager.auth);
    const client = await connect(key);
    const bad = await client.callTool({ name: 'auth__rename_role', arguments: { roleId: 'not-a-uuid', name: 'x' } });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0].text).toMatch(/Invalid arguments for tool auth__rename_role/);
    const wide = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i]));
    const tooWide = await client.callTool({ name: 'auth__list_roles', arguments: wide });
    expect((tooWide.content as { text: string }[])[0].text).toMatch(/maximum of 2000 elements/);
    const unknown = await client.callTool({ name: 'auth__drop_tables', arguments: {} });
    expect(unknown.isError).toBe(true);
    await request(t.url)
      .post(MCP)
      .set('Authorization', `Bearer ${key}`)
      .set('Accept', 'application/json, text/event-stream')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'auth__list_roles', arguments: { search: 'x'.repeat(70_000) } },
      })
      .expect(413);
    const get = await request(t.url).get(MCP).set('Authorization', `Bearer ${key}`).expect(405);
    expect(get.headers.allow).toBe('POST');
    expect(
      Number((await ds.query('SELECT count(*)::int AS n FROM ai_pending_actions WHERE tenant_id = $1', [manager.tenant.id]))[0].n),
    ).toBe(0);
  });
});
