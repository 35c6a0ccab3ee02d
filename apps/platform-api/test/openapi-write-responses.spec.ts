import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { operationsOf, ResponseSchemas, type FuzzOperation, type OpenApiDocument } from '@app/service-kit/testing';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * Issue #29 item 6, the part the fuzzer cannot reach: its generated bodies are refused (4xx), so the 2xx
 * answers of writes are never checked there. Here each write of notifications, attachments, audit-logs
 * and ai-assistant is called once with a valid body, and its 2xx body must fit the schema /openapi.json
 * documents for it, exactly: an object schema with listed properties admits no other field (a field the
 * document does not name fails; ResponseSchemas, as in the fuzzer).
 */

describe('2xx bodies of writes fit their documented schema exactly (issue #29)', () => {
  let t: PlatformTestApp;
  let operations: FuzzOperation[];
  let schemas: ResponseSchemas;
  let auth: Record<string, string>;
  let userId: string;
  let tenantId: string;

  beforeAll(async () => {
    t = await startPlatformApp();
    const doc = (await request(t.url).get('/openapi.json').expect(200)).body as OpenApiDocument;
    operations = operationsOf(doc);
    schemas = new ResponseSchemas(doc);
    const admin = await Factories.of(t).loggedInUser(t, { isSuperAdmin: true });
    auth = admin.auth;
    userId = admin.user.id;
    tenantId = admin.tenant.id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  /** The 2xx answer and what is wrong with its body ('fits' when nothing). */
  function verdict(method: string, path: string, res: request.Response): string {
    const operation = operations.find((o) => o.method === method && o.path === path);
    if (!operation) return `${method} ${path} is not in /openapi.json`;
    if (res.status >= 300) return `answered ${res.status} ${JSON.stringify(res.body)}`;
    const contentType = String(res.headers['content-type'] ?? '');
    return schemas.problem(operation, { status: res.status, contentType, body: res.body }) ?? 'fits';
  }
  const call = (method: 'post' | 'put', url: string, body: object) => request(t.url)[method](url).set(auth).send(body);

  it('ai-assistant: tool execution (read and mutation), cancel', async () => {
    const role = await call('post', '/auth/roles', { name: 'writes-role', tenantId });
    const proposal = await call('post', '/ai_assistant/tools/execute', {
      toolName: 'auth.rename_role',
      args: { roleId: role.body.id, name: 'x' },
    });
    expect(verdict('post', '/ai_assistant/tools/execute', proposal)).toBe('fits');
    const read = await call('post', '/ai_assistant/tools/execute', { toolName: 'auth.list_roles', args: {} });
    expect(verdict('post', '/ai_assistant/tools/execute', read)).toBe('fits');
    const cancelled = await call('post', `/ai_assistant/ai/actions/${proposal.body.pendingActionId}/cancel`, { reason: 'no' });
    expect(verdict('post', '/ai_assistant/ai/actions/{id}/cancel', cancelled)).toBe('fits');
  });

  it('audit-logs: undo, then redo', async () => {
    const role = await call('post', '/auth/roles', { name: 'undo-role', tenantId });
    const undone = await call('post', '/audit_logs/audit-logs/actions/undo', { undoToken: role.headers['x-undo-token'] });
    expect(verdict('post', '/audit_logs/audit-logs/actions/undo', undone)).toBe('fits');
    const redone = await call('post', '/audit_logs/audit-logs/actions/redo', { logId: undone.body.logId });
    expect(verdict('post', '/audit_logs/audit-logs/actions/redo', redone)).toBe('fits');
  });

  it('notifications: the four sends, an action, the settings', async () => {
    const role = await call('post', '/auth/roles', { name: 'notified-role', tenantId });
    const fields = { type: 'writes', title: 'T', severity: 'info' };
    const sends: [string, object][] = [
      ['/notifications', { recipientUserId: userId, actions: [{ id: 'ok', label: 'OK' }] }],
      ['/notifications/batch', { recipientUserIds: [userId] }],
      ['/notifications/role', { roleId: role.body.id }],
      ['/notifications/feature', { requiredFeature: 'auth.roles.list' }],
    ];
    for (const [path, body] of sends) expect(verdict('post', path, await call('post', path, { ...fields, ...body }))).toBe('fits');
    const { body: page } = await request(t.url).get('/notifications?type=writes').set(auth).expect(200);
    const actionable = (page.items as { id: string; actions: unknown[] }[]).find((n) => n.actions.length > 0);
    const taken = await call('post', `/notifications/${actionable?.id}/action`, { actionId: 'ok' });
    expect(verdict('post', '/notifications/{id}/action', taken)).toBe('fits');
    const settings = await call('post', '/notifications/settings', { strategies: { database: { enabled: true } } });
    expect(verdict('post', '/notifications/settings', settings)).toBe('fits');
  });

  it('ai-assistant: settings, allowlist, loop override, mutation policy, prompt override, route', async () => {
    const agent = '/ai_assistant/ai/agents/auth.access_assistant';
    const writes: ['post' | 'put', string, string, object][] = [
      ['put', '/ai_assistant/settings', '/ai_assistant/settings', { providerId: 'openai' }],
      ['put', '/ai_assistant/settings/allowlist', '/ai_assistant/settings/allowlist', { allowedProviders: ['openai'] }],
      [
        'put',
        `${agent}/loop-override`,
        '/ai_assistant/ai/agents/{agentId}/loop-override',
        { loopMaxSteps: 3, loopStopWhenJson: [{ type: 'stepCount', steps: 2 }], loopActiveToolsJson: [] },
      ],
      ['post', `${agent}/mutation-policy`, '/ai_assistant/ai/agents/{agentId}/mutation-policy', { mutationPolicy: 'read-only' }],
      ['post', `${agent}/prompt-override`, '/ai_assistant/ai/agents/{agentId}/prompt-override', { sections: { style: 'x' } }],
      ['post', '/ai_assistant/route', '/ai_assistant/route', { query: 'rename a role' }],
    ];
    for (const [method, url, path, body] of writes) expect(verdict(method, path, await call(method, url, body))).toBe('fits');
    // The reads after those writes: every field set (the fuzzer mostly sees them empty).
    for (const [url, path] of [
      ['/ai_assistant/settings', '/ai_assistant/settings'],
      [`${agent}/loop-override`, '/ai_assistant/ai/agents/{agentId}/loop-override'],
    ]) {
      expect(verdict('get', path, await request(t.url).get(url).set(auth))).toBe('fits');
    }
  });

  it('attachments: upload', async () => {
    const upload = await request(t.url)
      .post('/attachments')
      .set(auth)
      .field('entityId', 'crm:person')
      .field('recordId', userId)
      .attach('file', Buffer.from('writes'), { filename: 'w.txt', contentType: 'text/plain' });
    expect(verdict('post', '/attachments', upload)).toBe('fits');
  });

  it('ai-assistant: MCP answers JSON-RPC, one response or a batch', async () => {
    const mcp = (body: object) => call('post', '/ai_assistant/mcp', body).set('Accept', 'application/json, text/event-stream');
    for (const body of [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'no/such-method' },
      [
        { jsonrpc: '2.0', id: 3, method: 'tools/list' },
        { jsonrpc: '2.0', id: 4, method: 'ping' },
      ],
    ]) {
      expect(verdict('post', '/ai_assistant/mcp', await mcp(body))).toBe('fits');
    }
  });
});
