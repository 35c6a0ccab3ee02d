import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { z } from 'zod';
import { AgentRegistry } from '../src/modules/ai-assistant/agents/agent-registry.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { ScriptedOpenAI } from './support/scripted-openai.js';

const API_KEY = 'sk-settings-secret-0123456789';
const MANAGE = ['ai_assistant.view', 'ai_assistant.settings.manage', 'auth.roles.list'];

describe('AI runtime settings, allowlists, agents and loop overrides', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let provider: ScriptedOpenAI;
  let admin: Awaited<ReturnType<Factories['loggedInUser']>>;
  let viewer: Awaited<ReturnType<Factories['loggedInUser']>>;

  beforeAll(async () => {
    provider = await ScriptedOpenAI.start();
    t = await startPlatformApp({
      env: {
        AI_OPENAI_API_KEY: API_KEY,
        AI_OPENAI_BASE_URL: provider.url,
        AI_RUNTIME_BASEURL_ALLOWLIST: provider.url,
        AI_ALLOWED_PROVIDERS: 'openai',
        AI_ALLOWED_MODELS: 'gpt-4o-mini,gpt-4.1,gpt-4o',
      },
    });
    f = Factories.of(t);
    admin = await f.loggedInUser(t, { features: MANAGE });
    viewer = await f.loggedInUser(t, { features: ['ai_assistant.view', 'auth.roles.list'] }, admin.tenant);
    t.app.get(AgentRegistry).register({
      id: 'test.fixed_runtime',
      label: 'Fixed',
      description: 'No overrides',
      requiredFeatures: [],
      executionMode: 'object',
      mutationPolicy: 'read-only',
      allowRuntimeOverride: false,
      defaultProvider: 'openai',
      defaultModel: 'gpt-4o-mini',
      acceptedMediaTypes: ['image/*'],
      promptSections: {},
      tools: [],
      objectSchema: z.object({ ok: z.boolean() }),
    });
  });

  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  beforeEach(() => provider.reset());

  const modelAskedFor = async (auth: Record<string, string>, query = '') => {
    provider.script({ text: 'ok' });
    const res = await fetch(`${t.url}/ai_assistant/ai/chat?agent=auth.access_assistant${query}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    return { status: res.status, body: res.status === 200 ? null : JSON.parse(text), model: provider.requests[0]?.body.model };
  };

  it('every AI assistant route is in the OpenAPI document', async () => {
    const doc = await request(t.url).get('/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/ai_assistant/ai/chat',
        '/ai_assistant/ai/run-object',
        '/ai_assistant/ai/agents',
        '/ai_assistant/ai/agents/{agentId}/models',
        '/ai_assistant/ai/agents/{agentId}/loop-override',
        '/ai_assistant/settings',
        '/ai_assistant/settings/allowlist',
        '/ai_assistant/usage/daily',
        '/ai_assistant/usage/sessions',
        '/ai_assistant/usage/sessions/{sessionId}',
        '/ai_assistant/chat',
        '/ai_assistant/route',
        '/ai_assistant/health',
      ]),
    );
    // The settings and override controllers (one shared decorator, ai-settings.decorators.ts): every route
    // documents 401, a 403 naming the feature it requires, and (per-agent overrides) 404 for an unknown agent.
    const settingsPaths = Object.keys(doc.body.paths).filter((p) =>
      /^\/ai_assistant\/(settings|ai\/agents\/\{agentId\}\/(loop-override|prompt-override|mutation-policy))/.test(p),
    );
    expect(settingsPaths).toHaveLength(5);
    for (const p of settingsPaths) {
      for (const [method, operation] of Object.entries(
        doc.body.paths[p] as Record<string, { responses: Record<string, { description: string }> }>,
      )) {
        const where = `${method} ${p}`;
        expect({ where, unauthorized: operation.responses['401']?.description }).toEqual({ where, unauthorized: 'Not authenticated.' });
        expect({ where, forbidden: operation.responses['403']?.description }).toEqual({
          where,
          forbidden: expect.stringMatching(/^Missing ai_assistant\.(view|settings\.manage)\.$/),
        });
        if (p.includes('{agentId}'))
          expect({ where, notFound: operation.responses['404']?.description }).toEqual({ where, notFound: 'Unknown agent.' });
      }
    }
  });

  describe('GET/PUT/DELETE /ai_assistant/settings', () => {
    it('GET shows providers, defaults and allowlists, never a key; view is enough', async () => {
      const res = await request(t.url).get('/ai_assistant/settings').set(viewer.auth).expect(200);
      expect(res.body).toMatchObject({
        defaults: { providerId: 'openai', modelId: 'gpt-4o-mini' },
        environment: {
          allowedProviders: ['openai'],
          allowedModels: ['gpt-4o-mini', 'gpt-4.1', 'gpt-4o'],
          baseUrlAllowlist: [provider.url],
        },
        tenantDefault: null,
        agents: [],
        allowlist: null,
      });
      const byId = Object.fromEntries(res.body.providers.map((p: { id: string; configured: boolean }) => [p.id, p.configured]));
      expect(byId).toEqual({ openai: true, anthropic: false });
      expect(JSON.stringify(res.body)).not.toContain(API_KEY);
      await request(t.url).get('/ai_assistant/settings').expect(401);
    });

    it('PUT saves the tenant-wide and per-agent rows; chat uses them (agent row over tenant row)', async () => {
      const saved = await request(t.url)
        .put('/ai_assistant/settings')
        .set(admin.auth)
        .send({ providerId: 'openai', modelId: 'gpt-4.1', baseURL: `${provider.url}/` })
        .expect(200);
      expect(saved.body).toEqual({
        agentId: null,
        providerId: 'openai',
        modelId: 'gpt-4.1',
        baseURL: provider.url,
        allowedOverrideProviders: null,
        hasApiKey: false,
        updatedAt: expect.any(String),
      });
      expect(saved.headers['x-undo-token']).toEqual(expect.any(String));
      expect((await modelAskedFor(viewer.auth)).model).toBe('gpt-4.1');

      provider.reset();
      await request(t.url)
        .put('/ai_assistant/settings')
        .set(admin.auth)
        .send({ agentId: 'auth.access_assistant', modelId: 'gpt-4o' })
        .expect(200);
      expect((await modelAskedFor(viewer.auth)).model).toBe('gpt-4o');

      const listed = await request(t.url).get('/ai_assistant/settings').set(admin.auth).expect(200);
      expect(listed.body.tenantDefault).toMatchObject({ agentId: null, modelId: 'gpt-4.1' });
      expect(listed.body.agents).toEqual([expect.objectContaining({ agentId: 'auth.access_assistant', modelId: 'gpt-4o' })]);

      // Another tenant sees none of it, and its chats use the defaults.
      const stranger = await f.loggedInUser(t, { features: MANAGE });
      const theirs = await request(t.url).get('/ai_assistant/settings').set(stranger.auth).expect(200);
      expect(theirs.body).toMatchObject({ tenantDefault: null, agents: [] });
      provider.reset();
      expect((await modelAskedFor(stranger.auth)).model).toBe('gpt-4o-mini');

      // DELETE: the agent row, then the tenant row; a repeat clears nothing.
      await request(t.url)
        .delete('/ai_assistant/settings')
        .set(admin.auth)
        .send({ agentId: 'auth.access_assistant' })
        .expect(200, { cleared: true });
      await request(t.url)
        .delete('/ai_assistant/settings')
        .set(admin.auth)
        .send({ agentId: 'auth.access_assistant' })
        .expect(200, { cleared: false });
      await request(t.url).delete('/ai_assistant/settings').set(admin.auth).send({}).expect(200, { cleared: true });
      await request(t.url).delete('/ai_assistant/settings').set(admin.auth).expect(200, { cleared: false });
      provider.reset();
      expect((await modelAskedFor(viewer.auth)).model).toBe('gpt-4o-mini');
    });

    it('allowedOverrideProviders limits the providers a request may switch to', async () => {
      await request(t.url)
        .put('/ai_assistant/settings')
        .set(admin.auth)
        .send({ allowedOverrideProviders: ['openai'] })
        .expect(200);
      expect((await modelAskedFor(viewer.auth, '&provider=openai')).status).toBe(200);
      await request(t.url).delete('/ai_assistant/settings').set(admin.auth).send({}).expect(200);
    });

    it.each([
      [{ providerId: 'mistral' }, 'provider_unknown'],
      [{ providerId: 'anthropic' }, 'provider_not_in_env_allowlist'],
      [{ modelId: 'gpt-3.5-turbo' }, 'model_not_in_env_allowlist'],
      [{ baseURL: 'not a url' }, 'invalid_url'],
      [{ baseURL: 'ftp://127.0.0.1/v1' }, 'invalid_url'],
      [{ baseURL: 'https://evil.example/v1' }, 'baseurl_not_allowlisted'],
      [{ baseURL: 'http://127.0.0.1:1/v1' }, 'baseurl_not_allowlisted'],
      [{ allowedOverrideProviders: ['openai', 'nope'] }, 'provider_unknown'],
    ])('PUT %j is 400 %s', async (body, code) => {
      const res = await request(t.url).put('/ai_assistant/settings').set(admin.auth).send(body).expect(400);
      expect(res.body).toEqual({ error: expect.any(String), code });
    });

    it('baseURL must match an allowlist entry by origin and whole path segments', async () => {
      const res = await request(t.url)
        .put('/ai_assistant/settings')
        .set(admin.auth)
        .send({ baseURL: `${provider.url}x` })
        .expect(400);
      expect(res.body.code).toBe('baseurl_not_allowlisted');
      await request(t.url)
        .put('/ai_assistant/settings')
        .set(admin.auth)
        .send({ baseURL: `${provider.url}/deeper` })
        .expect(200);
      await request(t.url).delete('/ai_assistant/settings').set(admin.auth).send({}).expect(200, { cleared: true });
    });

    it('PUT: 400 for malformed fields, 404 unknown agent, 403 without settings.manage', async () => {
      const bad = await request(t.url)
        .put('/ai_assistant/settings')
        .set(admin.auth)
        .send({ providerId: 42, agentId: 'no dot' })
        .expect(400);
      expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['agentId', 'providerId']);
      await request(t.url)
        .put('/ai_assistant/settings')
        .set(admin.auth)
        .send({ agentId: 'auth.nobody' })
        .expect(404, { error: 'agent not found' });
      await request(t.url).put('/ai_assistant/settings').set(viewer.auth).send({ modelId: 'gpt-4o' }).expect(403);
      await request(t.url).delete('/ai_assistant/settings').set(viewer.auth).expect(403);
    });
  });

  describe('PUT/DELETE /ai_assistant/settings/allowlist', () => {
    it('saves a snapshot that chat enforces, clears idempotently', async () => {
      const saved = await request(t.url)
        .put('/ai_assistant/settings/allowlist')
        .set(admin.auth)
        .send({ allowedProviders: ['openai', 'openai'], allowedModels: ['gpt-4o-mini'] })
        .expect(200);
      expect(saved.body).toEqual({ allowedProviders: ['openai'], allowedModels: ['gpt-4o-mini'], updatedAt: expect.any(String) });
      expect((await modelAskedFor(viewer.auth)).status).toBe(200);
      const refused = await modelAskedFor(viewer.auth, '&model=gpt-4.1');
      expect(refused).toMatchObject({ status: 400, body: { error: expect.any(String), code: 'model_not_allowed' } });
      // The models endpoint lists only what the allowlist leaves.
      const models = await request(t.url).get('/ai_assistant/ai/agents/auth.access_assistant/models').set(viewer.auth).expect(200);
      expect(models.body.providers[0].models.map((m: { id: string }) => m.id)).toEqual(['gpt-4o-mini']);

      await request(t.url).delete('/ai_assistant/settings/allowlist').set(admin.auth).expect(200, { cleared: true });
      await request(t.url).delete('/ai_assistant/settings/allowlist').set(admin.auth).expect(200, { cleared: false });
      expect((await modelAskedFor(viewer.auth, '&model=gpt-4.1')).status).toBe(200);
    });

    it.each([
      [{ allowedProviders: ['anthropic'] }, 'provider_not_in_env_allowlist'],
      [{ allowedProviders: ['openai'], allowedModels: ['gpt-4.1-mini'] }, 'model_not_in_env_allowlist'],
      [{ allowedProviders: ['mistral'] }, 'provider_unknown'],
    ])('%j is 400 %s', async (body, code) => {
      const res = await request(t.url).put('/ai_assistant/settings/allowlist').set(admin.auth).send(body).expect(400);
      expect(res.body).toEqual({ error: expect.any(String), code });
    });

    it('400 for an empty or malformed list, 403 without settings.manage', async () => {
      await request(t.url).put('/ai_assistant/settings/allowlist').set(admin.auth).send({ allowedProviders: [] }).expect(400);
      await request(t.url).put('/ai_assistant/settings/allowlist').set(admin.auth).send({}).expect(400);
      await request(t.url).put('/ai_assistant/settings/allowlist').set(admin.auth).send({ allowedProviders: 'openai' }).expect(400);
      await request(t.url)
        .put('/ai_assistant/settings/allowlist')
        .set(viewer.auth)
        .send({ allowedProviders: ['openai'] })
        .expect(403);
      await request(t.url).delete('/ai_assistant/settings/allowlist').set(viewer.auth).expect(403);
    });
  });

  describe('GET /ai_assistant/ai/agents and /models', () => {
    it('lists the agents whose required features the caller holds', async () => {
      const res = await request(t.url).get('/ai_assistant/ai/agents').set(viewer.auth).expect(200);
      const ids = res.body.agents.map((a: { id: string }) => a.id);
      expect(ids).toEqual(['auth.access_assistant', 'auth.access_summary', 'test.fixed_runtime']);
      expect(res.body.agents[0]).toMatchObject({
        id: 'auth.access_assistant',
        executionMode: 'chat',
        requiredFeatures: ['auth.roles.list'],
        mutationPolicy: 'confirm-required',
        allowRuntimeOverride: true,
        tools: [
          { name: 'auth.list_roles', kind: 'read', description: expect.any(String) },
          { name: 'auth.rename_role', kind: 'mutation', destructive: false, description: expect.any(String) },
        ],
      });
      const bare = await f.loggedInUser(t, { features: ['ai_assistant.view'] });
      const few = await request(t.url).get('/ai_assistant/ai/agents').set(bare.auth).expect(200);
      expect(few.body.agents.map((a: { id: string }) => a.id)).toEqual(['test.fixed_runtime']);
      const none = await f.loggedInUser(t, { features: ['auth.roles.list'] });
      await request(t.url).get('/ai_assistant/ai/agents').set(none.auth).expect(403);
    });

    it('models: configured providers only, the agent’s default flagged; none when overrides are not allowed', async () => {
      const res = await request(t.url).get('/ai_assistant/ai/agents/auth.access_assistant/models').set(viewer.auth).expect(200);
      expect(res.body).toMatchObject({
        agentId: 'auth.access_assistant',
        allowRuntimeOverride: true,
        defaultProvider: 'openai',
        defaultModel: 'gpt-4o-mini',
      });
      expect(res.body.providers.map((p: { id: string }) => p.id)).toEqual(['openai']);
      const models = res.body.providers[0].models;
      expect(models.find((m: { isDefault: boolean }) => m.isDefault)).toMatchObject({ id: 'gpt-4o-mini' });
      // AI_ALLOWED_MODELS leaves three of the curated models.
      expect(models.map((m: { id: string }) => m.id).sort()).toEqual(['gpt-4.1', 'gpt-4o', 'gpt-4o-mini']);
      const fixed = await request(t.url).get('/ai_assistant/ai/agents/test.fixed_runtime/models').set(viewer.auth).expect(200);
      expect(fixed.body).toMatchObject({ allowRuntimeOverride: false, providers: [] });
      await request(t.url).get('/ai_assistant/ai/agents/auth.nobody/models').set(viewer.auth).expect(404);
      await request(t.url).get('/ai_assistant/ai/agents/bad%20id/models').set(viewer.auth).expect(400);
    });
  });

  describe('/ai_assistant/ai/agents/{agentId}/loop-override', () => {
    const path = '/ai_assistant/ai/agents/auth.access_assistant/loop-override';

    it('GET is null until set; PUT merges, null clears one axis; DELETE nulls all seven, idempotently', async () => {
      await request(t.url).get(path).set(viewer.auth).expect(200, { agentId: 'auth.access_assistant', override: null });
      const first = await request(t.url)
        .put(path)
        .set(admin.auth)
        .send({ loopMaxSteps: 3, loopMaxTokens: 5000, loopActiveToolsJson: ['auth.list_roles', 'auth.list_roles'] })
        .expect(200);
      expect(first.headers['x-undo-token']).toEqual(expect.any(String));
      expect(first.body).toEqual({
        agentId: 'auth.access_assistant',
        override: {
          loopDisabled: null,
          loopMaxSteps: 3,
          loopMaxToolCalls: null,
          loopMaxWallClockMs: null,
          loopMaxTokens: 5000,
          loopStopWhenJson: null,
          loopActiveToolsJson: ['auth.list_roles'],
          updatedAt: expect.any(String),
        },
      });
      const second = await request(t.url)
        .put(path)
        .set(admin.auth)
        .send({ loopMaxTokens: null, loopStopWhenJson: [{ type: 'stepCount', steps: 2 }] })
        .expect(200);
      expect(second.body.override).toMatchObject({
        loopMaxSteps: 3,
        loopMaxTokens: null,
        loopStopWhenJson: [{ type: 'stepCount', steps: 2 }],
      });
      expect((await request(t.url).get(path).set(viewer.auth).expect(200)).body).toEqual(second.body);

      // Another tenant has no override of its own.
      const stranger = await f.loggedInUser(t, { features: MANAGE });
      await request(t.url).get(path).set(stranger.auth).expect(200, { agentId: 'auth.access_assistant', override: null });

      await request(t.url).delete(path).set(admin.auth).expect(200, { agentId: 'auth.access_assistant', override: null });
      await request(t.url).delete(path).set(admin.auth).expect(200, { agentId: 'auth.access_assistant', override: null });
      await request(t.url).get(path).set(viewer.auth).expect(200, { agentId: 'auth.access_assistant', override: null });
    });

    it('validates each stop condition and active tool against the agent', async () => {
      const res = await request(t.url)
        .put(path)
        .set(admin.auth)
        .send({
          loopStopWhenJson: [
            { type: 'stepCount', steps: 2 },
            { type: 'stepCount', steps: 0 },
            { type: 'hasToolCall', toolName: 'auth.drop_tables' },
            { type: 'whenever' },
          ],
        })
        .expect(400);
      const fields = res.body.details.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['loopStopWhenJson[1].steps', 'loopStopWhenJson[2].toolName']));
      expect(fields.some((field: string) => field.startsWith('loopStopWhenJson[3]'))).toBe(true);
      expect(fields.some((field: string) => field.startsWith('loopStopWhenJson[0]'))).toBe(false);
      const tools = await request(t.url)
        .put(path)
        .set(admin.auth)
        .send({ loopActiveToolsJson: ['auth.list_roles', 'auth.drop_tables'] })
        .expect(400);
      expect(tools.body.details).toEqual([
        { field: 'loopActiveToolsJson[1]', message: expect.stringContaining('auth.drop_tables'), code: 'unknown_tool' },
      ]);
      await request(t.url).get(path).set(viewer.auth).expect(200, { agentId: 'auth.access_assistant', override: null });
    });

    it.each([
      ['loopMaxSteps 0', { loopMaxSteps: 0 }],
      ['loopMaxSteps 51', { loopMaxSteps: 51 }],
      ['loopMaxToolCalls -1', { loopMaxToolCalls: -1 }],
      ['loopMaxWallClockMs 999', { loopMaxWallClockMs: 999 }],
      ['loopMaxTokens 1.5', { loopMaxTokens: 1.5 }],
      ['loopDisabled "yes"', { loopDisabled: 'yes' }],
      ['loopStopWhenJson not a list', { loopStopWhenJson: 'stepCount' }],
      ['101 active tools', { loopActiveToolsJson: Array.from({ length: 101 }, () => 'auth.list_roles') }],
    ])('400 for %s', async (_name, body) => {
      const res = await request(t.url).put(path).set(admin.auth).send(body).expect(400);
      expect(res.body.details).toEqual(expect.any(Array));
    });

    it('400 invalid id, 404 unknown agent, 403 without settings.manage for writes', async () => {
      await request(t.url).get('/ai_assistant/ai/agents/nodot/loop-override').set(viewer.auth).expect(400);
      await request(t.url)
        .get('/ai_assistant/ai/agents/auth.nobody/loop-override')
        .set(viewer.auth)
        .expect(404, { error: 'agent not found' });
      await request(t.url).put('/ai_assistant/ai/agents/auth.nobody/loop-override').set(admin.auth).send({ loopMaxSteps: 2 }).expect(404);
      await request(t.url).delete('/ai_assistant/ai/agents/auth.nobody/loop-override').set(admin.auth).expect(404);
      await request(t.url).put(path).set(viewer.auth).send({ loopMaxSteps: 2 }).expect(403);
      await request(t.url).delete(path).set(viewer.auth).expect(403);
    });
  });
});
