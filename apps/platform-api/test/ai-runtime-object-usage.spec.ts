import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { readChatStream, ScriptedOpenAI } from './support/scripted-openai.js';

const FEATURES = ['ai_assistant.view', 'ai_assistant.settings.manage', 'auth.roles.list'];
const today = () => new Date().toISOString().slice(0, 10);

describe('AI run-object, usage reports and the assistant entry points', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let provider: ScriptedOpenAI;
  let admin: Awaited<ReturnType<Factories['loggedInUser']>>;

  beforeAll(async () => {
    provider = await ScriptedOpenAI.start();
    t = await startPlatformApp({ env: { AI_OPENAI_API_KEY: 'sk-object-usage', AI_OPENAI_BASE_URL: provider.url } });
    f = Factories.of(t);
    admin = await f.loggedInUser(t, { features: FEATURES });
  });

  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  beforeEach(() => provider.reset());

  const runObject = (body: object, auth = admin.auth) => request(t.url).post('/ai_assistant/ai/run-object').set(auth).send(body);
  const ask = { messages: [{ role: 'user', content: 'summarise our access setup' }] };

  async function chat(query: string, body: object, auth = admin.auth) {
    const res = await fetch(`${t.url}/ai_assistant/ai/chat?${query}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  }

  describe('POST /ai_assistant/ai/run-object', () => {
    it('asks for the agent’s JSON schema and answers the validated object with usage', async () => {
      await f.role(admin.tenant.id, { features: [] }, { name: 'auditors' });
      provider.script({ json: { summary: 'Two roles.', roleCount: 2 }, usage: { promptTokens: 40, completionTokens: 12 } });
      const res = await runObject({ agent: 'auth.access_summary', ...ask }).expect(200);
      expect(res.body).toEqual({
        object: { summary: 'Two roles.', roleCount: 2 },
        usage: { inputTokens: 40, outputTokens: 12, totalTokens: 52 },
        finishReason: 'stop',
      });
      const [sent] = provider.requests;
      expect(sent.body.stream).toBeFalsy();
      expect(sent.body.response_format).toMatchObject({
        type: 'json_schema',
        json_schema: {
          name: 'auth_access_summary',
          schema: { type: 'object', properties: { summary: { type: 'string' }, roleCount: { type: 'integer' } } },
        },
      });
      // The agent's context: the caller's roles, read with its access.
      expect(JSON.stringify(sent.body.messages?.[0])).toContain('auditors');
    });

    it.each([
      ['invalid JSON', { raw: '{"summary": "cut off' }],
      ['JSON the schema refuses', { json: { summary: 'x', roleCount: 'two' } }],
      ['JSON with a missing field', { json: { summary: 'x' } }],
    ])('502 invalid_model_output for %s', async (_name, reply) => {
      provider.script(reply);
      const res = await runObject({ agent: 'auth.access_summary', ...ask }).expect(502);
      expect(res.body).toEqual({ error: expect.any(String), code: 'invalid_model_output' });
    });

    it('400 provider_not_configured for a registered provider without a key', async () => {
      const settings = await request(t.url)
        .put('/ai_assistant/settings')
        .set(admin.auth)
        .send({ agentId: 'auth.access_summary', providerId: 'anthropic' })
        .expect(200);
      expect(settings.body.providerId).toBe('anthropic');
      const res = await runObject({ agent: 'auth.access_summary', ...ask }).expect(400);
      expect(res.body).toEqual({ error: expect.any(String), code: 'provider_not_configured' });
      await request(t.url)
        .delete('/ai_assistant/settings')
        .set(admin.auth)
        .send({ agentId: 'auth.access_summary' })
        .expect(200, { cleared: true });
    });

    it('422 for a chat agent, 404 unknown agent, 403 without its features, 400 malformed body', async () => {
      const chatAgent = await runObject({ agent: 'auth.access_assistant', ...ask }).expect(422);
      expect(chatAgent.body).toEqual({ error: expect.any(String), code: 'execution_mode_not_supported' });
      await runObject({ agent: 'auth.nothing', ...ask }).expect(404, { error: 'agent not found' });
      const viewOnly = await f.loggedInUser(t, { features: ['ai_assistant.view'] });
      await runObject({ agent: 'auth.access_summary', ...ask }, viewOnly.auth).expect(403);
      await runObject({ agent: 'auth.access_summary' }).expect(400);
      await runObject({ agent: 'auth.access_summary', messages: [{ role: 'tool', content: 'x' }] }).expect(400);
      expect(provider.requests).toHaveLength(0);
    });

    it('502 provider_error when the provider fails; 504 at the wall clock limit', async () => {
      provider.script({ status: 503 }, { status: 503 });
      const failed = await runObject({ agent: 'auth.access_summary', ...ask }).expect(502);
      expect(failed.body).toEqual({ error: 'the AI provider answered 503', code: 'provider_error' });

      const path = '/ai_assistant/ai/agents/auth.access_summary/loop-override';
      await request(t.url).put(path).set(admin.auth).send({ loopMaxWallClockMs: 1000 }).expect(200);
      provider.script({ hang: true });
      const slow = await runObject({ agent: 'auth.access_summary', ...ask }).expect(504);
      expect(slow.body).toEqual({ error: expect.any(String), code: 'wall_clock_exceeded' });
      await request(t.url).delete(path).set(admin.auth).expect(200);
    });
  });

  describe('usage', () => {
    const sessionId = randomUUID();

    beforeAll(async () => {
      provider.reset();
      provider.script(
        { toolCalls: [{ name: 'auth__list_roles', args: {} }], usage: { promptTokens: 10, completionTokens: 5 } },
        { text: 'done', usage: { promptTokens: 20, completionTokens: 8 } },
        { text: 'again', usage: { promptTokens: 3, completionTokens: 2 } },
      );
      const first = await chat('agent=auth.access_assistant', { ...ask, sessionId });
      expect(first.status).toBe(200);
      const second = await chat('agent=auth.access_assistant&model=gpt-4.1', { ...ask, sessionId });
      expect(second.status).toBe(200);
    });

    it('writes a row per model step; GET /usage/sessions/{id} answers them in order', async () => {
      const res = await request(t.url).get(`/ai_assistant/usage/sessions/${sessionId}`).set(admin.auth).expect(200);
      expect(res.body.sessionId).toBe(sessionId);
      expect(
        res.body.items.map((r: { stepIndex: number; inputTokens: number; outputTokens: number; modelId: string }) => [
          r.stepIndex,
          r.inputTokens,
          r.outputTokens,
          r.modelId,
        ]),
      ).toEqual([
        [0, 10, 5, 'gpt-4o-mini'],
        [1, 20, 8, 'gpt-4o-mini'],
        [0, 3, 2, 'gpt-4.1'],
      ]);
      expect(res.body.items[0]).toMatchObject({
        sessionId,
        agentId: 'auth.access_assistant',
        providerId: 'openai',
        userId: admin.user.id,
        organizationId: admin.tenant.organizationId,
        totalTokens: 15,
        finishReason: 'tool-calls',
        createdAt: expect.any(String),
      });
    });

    it('session summaries with pagination metadata', async () => {
      const res = await request(t.url)
        .get('/ai_assistant/usage/sessions')
        .query({ from: today(), to: today(), limit: 50, offset: 0 })
        .set(admin.auth)
        .expect(200);
      expect(res.body).toMatchObject({ limit: 50, offset: 0 });
      const mine = res.body.items.find((s: { sessionId: string }) => s.sessionId === sessionId);
      expect(mine).toMatchObject({
        steps: 3,
        inputTokens: 33,
        outputTokens: 15,
        totalTokens: 48,
        agentIds: ['auth.access_assistant'],
        modelIds: ['gpt-4.1', 'gpt-4o-mini'],
        userId: admin.user.id,
      });
      const past = await request(t.url)
        .get('/ai_assistant/usage/sessions')
        .query({ from: today(), to: today(), limit: 1, offset: 1000 })
        .set(admin.auth)
        .expect(200);
      expect(past.body).toEqual({ items: [], total: res.body.total, limit: 1, offset: 1000 });
      const filtered = await request(t.url)
        .get('/ai_assistant/usage/sessions')
        .query({ from: today(), to: today(), limit: 5, offset: 0, agentId: 'auth.other_agent' })
        .set(admin.auth)
        .expect(200);
      expect(filtered.body).toEqual({ items: [], total: 0, limit: 5, offset: 0 });
    });

    it('daily rollups per (day, agent, model), filtered by agent and model', async () => {
      const res = await request(t.url).get('/ai_assistant/usage/daily').query({ from: today(), to: today() }).set(admin.auth).expect(200);
      const rows = res.body.items.filter((r: { agentId: string }) => r.agentId === 'auth.access_assistant');
      expect(rows).toEqual(
        expect.arrayContaining([
          {
            day: today(),
            agentId: 'auth.access_assistant',
            modelId: 'gpt-4o-mini',
            providerIds: ['openai'],
            steps: 2,
            sessions: 1,
            inputTokens: 30,
            outputTokens: 13,
            totalTokens: 43,
          },
          {
            day: today(),
            agentId: 'auth.access_assistant',
            modelId: 'gpt-4.1',
            providerIds: ['openai'],
            steps: 1,
            sessions: 1,
            inputTokens: 3,
            outputTokens: 2,
            totalTokens: 5,
          },
        ]),
      );
      const byModel = await request(t.url)
        .get('/ai_assistant/usage/daily')
        .query({ from: today(), to: today(), modelId: 'gpt-4.1' })
        .set(admin.auth)
        .expect(200);
      expect(byModel.body.items.map((r: { modelId: string }) => r.modelId)).toEqual(['gpt-4.1']);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      await request(t.url)
        .get('/ai_assistant/usage/daily')
        .query({ from: yesterday, to: yesterday })
        .set(admin.auth)
        .expect(200, { items: [] });
    });

    it('another tenant sees none of it; 403 without settings.manage; 400 for bad parameters', async () => {
      const stranger = await f.loggedInUser(t, { features: FEATURES });
      await request(t.url).get(`/ai_assistant/usage/sessions/${sessionId}`).set(stranger.auth).expect(404, { error: 'session not found' });
      const theirs = await request(t.url)
        .get('/ai_assistant/usage/daily')
        .query({ from: today(), to: today() })
        .set(stranger.auth)
        .expect(200);
      expect(theirs.body).toEqual({ items: [] });
      const viewer = await f.loggedInUser(t, { features: ['ai_assistant.view'] }, admin.tenant);
      await request(t.url).get(`/ai_assistant/usage/sessions/${sessionId}`).set(viewer.auth).expect(403);
      await request(t.url).get('/ai_assistant/usage/daily').query({ from: today(), to: today() }).set(viewer.auth).expect(403);

      await request(t.url)
        .get('/ai_assistant/usage/sessions/not-a-uuid')
        .set(admin.auth)
        .expect(400, { error: 'sessionId must be a UUID' });
      await request(t.url).get('/ai_assistant/usage/daily').query({ from: today() }).set(admin.auth).expect(400);
      await request(t.url).get('/ai_assistant/usage/daily').query({ from: 'yesterday', to: today() }).set(admin.auth).expect(400);
      await request(t.url).get('/ai_assistant/usage/daily').query({ from: '2025-03-02', to: '2025-03-01' }).set(admin.auth).expect(400);
      await request(t.url).get('/ai_assistant/usage/daily').query({ from: '2020-01-01', to: '2025-01-01' }).set(admin.auth).expect(400);
      await request(t.url).get('/ai_assistant/usage/sessions').query({ from: today(), to: today(), offset: 0 }).set(admin.auth).expect(400);
      await request(t.url)
        .get('/ai_assistant/usage/sessions')
        .query({ from: today(), to: today(), limit: 101, offset: 0 })
        .set(admin.auth)
        .expect(400);
    });

    it('run-object writes its usage row too', async () => {
      const objectSession = randomUUID();
      provider.script({ json: { summary: 's', roleCount: 1 }, usage: { promptTokens: 7, completionTokens: 3 } });
      await runObject({ agent: 'auth.access_summary', ...ask, sessionId: objectSession }).expect(200);
      const res = await request(t.url).get(`/ai_assistant/usage/sessions/${objectSession}`).set(admin.auth).expect(200);
      expect(res.body.items).toEqual([
        expect.objectContaining({ agentId: 'auth.access_summary', stepIndex: 0, inputTokens: 7, outputTokens: 3 }),
      ]);
    });
  });

  describe('POST /ai_assistant/chat, POST /ai_assistant/route, GET /ai_assistant/health', () => {
    it('/chat answers 201 with the same stream, routed to a chat agent when none is named', async () => {
      provider.script({ text: 'Hi!' });
      const res = await fetch(`${t.url}/ai_assistant/chat`, {
        method: 'POST',
        headers: { ...admin.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'what roles do we have?' }),
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
      const { chunks, done } = await readChatStream(await res.text());
      expect(done).toBe(true);
      expect(chunks[0]).toMatchObject({ type: 'start', messageMetadata: { agentId: 'auth.access_assistant' } });
      expect(chunks.some((c) => c.type === 'text-delta' && c.delta === 'Hi!')).toBe(true);
      await request(t.url).post('/ai_assistant/chat').set(admin.auth).send({}).expect(400);
      const nobody = await f.loggedInUser(t, { features: ['ai_assistant.view'] });
      await request(t.url).post('/ai_assistant/chat').set(nobody.auth).send({ message: 'hi' }).expect(404);
    });

    it('/route picks the agent whose vocabulary the query uses, among those the caller may use', async () => {
      const rename = await request(t.url)
        .post('/ai_assistant/route')
        .set(admin.auth)
        .send({ query: 'Please rename the support role' })
        .expect(201);
      expect(rename.body).toMatchObject({ agentId: 'auth.access_assistant', executionMode: 'chat' });
      const summary = await request(t.url)
        .post('/ai_assistant/route')
        .set(admin.auth)
        .send({ query: 'a summary of the roles' })
        .expect(201);
      expect(summary.body.agentId).toBe('auth.access_summary');
      expect(summary.body.candidates.map((c: { agentId: string }) => c.agentId).sort()).toEqual([
        'auth.access_assistant',
        'auth.access_summary',
      ]);
      const nobody = await f.loggedInUser(t, { features: ['ai_assistant.view'] });
      await request(t.url)
        .post('/ai_assistant/route')
        .set(nobody.auth)
        .send({ query: 'rename a role' })
        .expect(201, { agentId: null, executionMode: null, candidates: [] });
      await request(t.url).post('/ai_assistant/route').set(admin.auth).send({ query: '' }).expect(400);
      await request(t.url)
        .post('/ai_assistant/route')
        .set(admin.auth)
        .send({ query: 'a'.repeat(4001) })
        .expect(400);
    });

    it('/health reports the providers and the MCP tool protocol', async () => {
      const res = await request(t.url).get('/ai_assistant/health').set(admin.auth).expect(200);
      expect(res.body).toEqual({
        status: 'ok',
        runtime: {
          defaultProvider: 'openai',
          defaultModel: 'gpt-4o-mini',
          providers: [
            { id: 'openai', configured: true, isDefault: true, reachable: true },
            { id: 'anthropic', configured: false, isDefault: false, reachable: null },
          ],
        },
        toolProtocol: { protocol: 'mcp', protocolVersion: expect.any(String), status: 'ok', tools: 1 },
      });
      // The probe sends no key.
      await request(t.url).get('/ai_assistant/health').expect(401);
    });
  });
});
