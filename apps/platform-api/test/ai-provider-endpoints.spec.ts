import { lookup } from 'node:dns/promises';
import { createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { isNonPublicAddress } from '@app/service-kit';
import { freePort } from '@app/service-kit/testing';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { readChatStream, ScriptedOpenAI } from './support/scripted-openai.js';

/**
 * decisions.md "Provider endpoints and spend": the deployment's key only ever goes to the deployment's
 * base URL; another base URL (a request's `baseUrl`, a tenant's settings) gets the key the tenant
 * stored with it or none, must match AI_RUNTIME_BASEURL_ALLOWLIST when set, may not reach a private
 * address in production, and every failure talking to it reads the same.
 */
const DEPLOYMENT_KEY = 'sk-deployment-secret-0123456789';
const ANTHROPIC_KEY = 'sk-ant-deployment-secret';
const TENANT_KEY = 'sk-tenant-own-key-9876';
const CHAT = ['ai_assistant.view', 'auth.roles.list'];
const MANAGE = [...CHAT, 'ai_assistant.settings.manage'];
const CHOSEN_FAILURE = 'the AI provider at the chosen base URL could not be used';

type User = Awaited<ReturnType<Factories['loggedInUser']>>;

/** The provider with its script and recorded requests forgotten. */
const fresh = (provider: ScriptedOpenAI) => {
  provider.reset();
  return provider;
};

async function chat(t: PlatformTestApp, auth: Record<string, string>, query: Record<string, string> = {}) {
  const url = new URL(`${t.url}/ai_assistant/ai/chat`);
  url.searchParams.set('agent', 'auth.access_assistant');
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await res.text();
  return { status: res.status, text, body: res.status === 200 ? null : (JSON.parse(text) as unknown) };
}

/** A TCP listener that is not HTTP: answers like Redis does to a stranger, then hangs up. */
async function startNonHttpListener(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', () => socket.end('-ERR unknown command\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('AI provider endpoints: whose key goes where', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let deployment: ScriptedOpenAI;
  let own: ScriptedOpenAI;
  let user: User;
  let admin: User;

  beforeAll(async () => {
    deployment = await ScriptedOpenAI.start();
    own = await ScriptedOpenAI.start();
    t = await startPlatformApp({
      env: {
        AI_OPENAI_API_KEY: DEPLOYMENT_KEY,
        AI_OPENAI_BASE_URL: deployment.url,
        AI_ANTHROPIC_API_KEY: ANTHROPIC_KEY,
        AI_ANTHROPIC_BASE_URL: deployment.url,
      },
    });
    f = Factories.of(t);
    admin = await f.loggedInUser(t, { features: MANAGE });
    user = await f.loggedInUser(t, { features: CHAT }, admin.tenant);
  });

  afterAll(async () => {
    await t?.close();
    await deployment?.close();
    await own?.close();
  });

  beforeEach(async () => {
    fresh(deployment).otherwise(() => ({ text: 'from the deployment' }));
    fresh(own).otherwise(() => ({ text: 'from the tenant’s own endpoint' }));
    await request(t.url).delete('/ai_assistant/settings').set(admin.auth).send({}).expect(200);
  });

  const saveSettings = (body: object) => request(t.url).put('/ai_assistant/settings').set(admin.auth).send(body);

  it('the deployment’s base URL gets the deployment’s key, named or not', async () => {
    expect((await chat(t, user.auth)).status).toBe(200);
    expect((await chat(t, user.auth, { baseUrl: `${deployment.url}/` })).status).toBe(200);
    expect(deployment.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${DEPLOYMENT_KEY}`, `Bearer ${DEPLOYMENT_KEY}`]);
  });

  it('a request’s baseUrl elsewhere gets no key at all', async () => {
    const { status, text } = await chat(t, user.auth, { baseUrl: own.url });
    expect(status).toBe(200);
    expect((await readChatStream(text)).message?.parts).toContainEqual(expect.objectContaining({ text: 'from the tenant’s own endpoint' }));
    expect(own.requests).toHaveLength(1);
    expect(own.requests[0].headers.authorization).toBeUndefined();
    expect(JSON.stringify(own.requests[0].headers)).not.toContain(DEPLOYMENT_KEY);
    expect(deployment.requests).toHaveLength(0);
  });

  it('anthropic’s protocol too: no x-api-key elsewhere, even with ANTHROPIC_API_KEY in the process environment', async () => {
    const before = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-from-the-environment';
    try {
      const { status } = await chat(t, user.auth, { provider: 'anthropic', model: 'claude-3-5-haiku-latest', baseUrl: own.url });
      expect(status).toBe(200);
    } finally {
      if (before === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = before;
    }
    expect(own.otherRequests).toHaveLength(1);
    expect(own.otherRequests[0]).toMatchObject({ method: 'POST', path: '/v1/messages' });
    expect(own.otherRequests[0].headers['x-api-key']).toBeUndefined();
    expect(own.otherRequests[0].headers.authorization).toBeUndefined();
  });

  it('a key the tenant stores with its own URL goes there, encrypted at rest, never returned; another URL gets none', async () => {
    const saved = await saveSettings({ baseURL: own.url, apiKey: TENANT_KEY }).expect(200);
    expect(saved.body).toEqual({
      agentId: null,
      providerId: null,
      modelId: null,
      baseURL: own.url,
      allowedOverrideProviders: null,
      hasApiKey: true,
      updatedAt: expect.any(String),
    });
    const shown = await request(t.url).get('/ai_assistant/settings').set(admin.auth).expect(200);
    expect(shown.body.tenantDefault).toMatchObject({ baseURL: own.url, hasApiKey: true });
    expect(JSON.stringify(shown.body)).not.toContain(TENANT_KEY);
    const [stored] = await t.app
      .get(DataSource)
      .query('SELECT api_key_sealed FROM ai_runtime_settings WHERE tenant_id = $1 AND agent_id IS NULL', [admin.tenant.id]);
    expect(stored.api_key_sealed).toEqual(expect.stringMatching(/^v1\./));
    expect(stored.api_key_sealed).not.toContain(TENANT_KEY);
    expect(Buffer.from(stored.api_key_sealed.slice(3), 'base64url').toString('latin1')).not.toContain(TENANT_KEY);
    // The action log's snapshots say `hasApiKey`, never the key nor its ciphertext.
    const logs = await t.app.get(DataSource).query(`SELECT row_to_json(a)::text AS entry FROM action_logs a`);
    expect(logs.length).toBeGreaterThan(0);
    for (const { entry } of logs as { entry: string }[]) {
      expect(entry).not.toContain(TENANT_KEY);
      expect(entry).not.toContain(stored.api_key_sealed);
    }

    // The settings' URL (as saved, or named again by the request) gets the tenant's key.
    expect((await chat(t, user.auth)).status).toBe(200);
    expect((await chat(t, user.auth, { baseUrl: `${own.url}/` })).status).toBe(200);
    expect(own.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${TENANT_KEY}`, `Bearer ${TENANT_KEY}`]);
    // Any other URL a request names gets none: not the tenant's, not the deployment's.
    fresh(own).otherwise(() => ({ text: 'ok' }));
    expect((await chat(t, user.auth, { baseUrl: own.url.replace(/\/v1$/, '/v2') })).status).toBe(200);
    expect(own.requests).toHaveLength(1);
    expect(own.requests[0].path).toBe('/v2/chat/completions');
    expect(own.requests[0].headers.authorization).toBeUndefined();
    // The deployment's URL named by the request: the deployment's key, never the tenant's.
    expect((await chat(t, user.auth, { baseUrl: deployment.url })).status).toBe(200);
    expect(deployment.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${DEPLOYMENT_KEY}`]);
  });

  it('the stored key stays while the URL does (a PUT that leaves it out), goes with a new URL or null', async () => {
    await saveSettings({ baseURL: own.url, apiKey: TENANT_KEY }).expect(200);
    expect((await saveSettings({ baseURL: own.url, modelId: 'gpt-4.1' }).expect(200)).body.hasApiKey).toBe(true);
    expect((await chat(t, user.auth)).status).toBe(200);
    expect(own.requests[0].headers.authorization).toBe(`Bearer ${TENANT_KEY}`);
    expect((await saveSettings({ baseURL: own.url.replace(/\/v1$/, '/v2') }).expect(200)).body.hasApiKey).toBe(false);
    await saveSettings({ baseURL: own.url, apiKey: TENANT_KEY }).expect(200);
    expect((await saveSettings({ baseURL: own.url, apiKey: null }).expect(200)).body.hasApiKey).toBe(false);
    fresh(own).otherwise(() => ({ text: 'ok' }));
    expect((await chat(t, user.auth)).status).toBe(200);
    expect(own.requests[0].headers.authorization).toBeUndefined();
    // A key that could end up in a header line is refused.
    const bad = await saveSettings({ baseURL: own.url, apiKey: 'sk-x\r\nX-Injected: 1' });
    expect({ status: bad.status, fields: bad.body.details?.map((d: { field: string }) => d.field) }).toEqual({
      status: 400,
      fields: ['apiKey'],
    });
    expect(JSON.stringify(bad.body)).not.toContain('sk-x');
  });

  describe('a failure talking to a chosen URL reads the same, whether or not a host or port answered', () => {
    let nonHttp: Awaited<ReturnType<typeof startNonHttpListener>>;
    beforeAll(async () => {
      nonHttp = await startNonHttpListener();
    });
    afterAll(async () => {
      await nonHttp?.close();
    });

    it('chat: a closed port, a listening non-HTTP port and an HTTP error give the same stream', async () => {
      const closed = `http://127.0.0.1:${await freePort()}/v1`;
      fresh(own).otherwise(() => ({ status: 404, error: 'no such model' }));
      const streams: Record<string, unknown> = {};
      for (const [what, baseUrl] of [
        ['closed port', closed],
        ['non-HTTP listener', nonHttp.url],
        ['HTTP 404', own.url],
      ]) {
        const { status, text } = await chat(t, user.auth, { baseUrl });
        expect(status).toBe(200);
        const { chunks, done } = await readChatStream(text);
        expect(done).toBe(true);
        // The start part carries a fresh session id: compare the rest.
        streams[what] = chunks.map((c) => (c.type === 'start' ? { type: 'start' } : c));
      }
      expect(streams['closed port']).toContainEqual({ type: 'error', errorText: CHOSEN_FAILURE });
      expect(streams['non-HTTP listener']).toEqual(streams['closed port']);
      expect(streams['HTTP 404']).toEqual(streams['closed port']);
    });

    it('run-object: the same 502 for each', async () => {
      const closed = `http://127.0.0.1:${await freePort()}/v1`;
      fresh(own).otherwise(() => ({ status: 401, error: 'bad key' }));
      const answers = [];
      for (const baseURL of [closed, nonHttp.url, own.url]) {
        await saveSettings({ agentId: 'auth.access_summary', baseURL }).expect(200);
        const res = await request(t.url)
          .post('/ai_assistant/ai/run-object')
          .set(user.auth)
          .send({ agent: 'auth.access_summary', messages: [{ role: 'user', content: 'sum up' }] });
        answers.push({ status: res.status, body: res.body });
      }
      expect(answers).toEqual(Array(3).fill({ status: 502, body: { error: CHOSEN_FAILURE, code: 'provider_error' } }));
      await request(t.url).delete('/ai_assistant/settings').set(admin.auth).send({ agentId: 'auth.access_summary' }).expect(200);
    });
  });
});

describe('AI provider endpoints: AI_RUNTIME_BASEURL_ALLOWLIST set', () => {
  let t: PlatformTestApp;
  let deployment: ScriptedOpenAI;
  let own: ScriptedOpenAI;
  let user: User;

  beforeAll(async () => {
    deployment = await ScriptedOpenAI.start();
    own = await ScriptedOpenAI.start();
    t = await startPlatformApp({
      env: { AI_OPENAI_API_KEY: DEPLOYMENT_KEY, AI_OPENAI_BASE_URL: deployment.url, AI_RUNTIME_BASEURL_ALLOWLIST: own.url },
    });
    user = await Factories.of(t).loggedInUser(t, { features: MANAGE });
  });

  afterAll(async () => {
    await t?.close();
    await deployment?.close();
    await own?.close();
  });

  it('another URL outside it is 400 baseurl_not_allowlisted (chat and settings), nothing is called; inside it, no key', async () => {
    for (const baseUrl of ['http://127.0.0.1:6379/v1', own.url.replace(/\/v1$/, '/v2'), 'https://api.example.com/v1']) {
      expect(await chat(t, user.auth, { baseUrl })).toMatchObject({
        status: 400,
        body: { error: expect.any(String), code: 'baseurl_not_allowlisted' },
      });
      const saved = await request(t.url).put('/ai_assistant/settings').set(user.auth).send({ baseURL: baseUrl });
      expect({ status: saved.status, body: saved.body }).toEqual({
        status: 400,
        body: { error: expect.any(String), code: 'baseurl_not_allowlisted' },
      });
    }
    expect(own.requests).toHaveLength(0);
    expect(deployment.requests).toHaveLength(0);
    own.otherwise(() => ({ text: 'ok' }));
    deployment.otherwise(() => ({ text: 'ok' }));
    expect((await chat(t, user.auth, { baseUrl: `${own.url}/` })).status).toBe(200);
    expect(own.requests[0].headers.authorization).toBeUndefined();
    // The deployment's own URL is not "another" URL: no allowlist entry needed, and its key goes with it.
    expect((await chat(t, user.auth, { baseUrl: deployment.url })).status).toBe(200);
    expect(deployment.requests[0].headers.authorization).toBe(`Bearer ${DEPLOYMENT_KEY}`);
  });
});

describe('AI provider endpoints in production: private targets refused', () => {
  let deployment: ScriptedOpenAI;
  let own: ScriptedOpenAI;

  beforeAll(async () => {
    deployment = await ScriptedOpenAI.start();
    own = await ScriptedOpenAI.start();
    deployment.otherwise(() => ({ text: 'ok' }));
    own.otherwise(() => ({ text: 'ok' }));
  });

  afterAll(async () => {
    await deployment?.close();
    await own?.close();
  });

  const productionEnv = () => ({
    NODE_ENV: 'production',
    AUTH_JWT_SECRET: 'production-test-jwt-secret-0123456789abcdef',
    CONSENT_INTEGRITY_SECRET: 'production-test-consent-secret-0123456789',
    AI_OPENAI_API_KEY: DEPLOYMENT_KEY,
    // The operator's own endpoint may be private (a model server inside the cluster): it is not checked.
    AI_OPENAI_BASE_URL: deployment.url,
  });

  it('400 baseurl_not_allowed for a private literal or localhost name; a name resolving to one is refused when connecting', async () => {
    const t = await startPlatformApp({ env: productionEnv() });
    try {
      const user = await Factories.of(t).loggedInUser(t, { features: MANAGE });
      const port = new URL(own.url).port;
      for (const baseUrl of [
        own.url,
        `http://localhost:${port}/v1`,
        `http://[::1]:${port}/v1`,
        `http://[::ffff:127.0.0.1]:${port}/v1`,
        `http://[::127.0.0.1]:${port}/v1`,
        'http://169.254.169.254/latest',
        'http://10.0.0.7:8000/v1',
      ]) {
        expect(await chat(t, user.auth, { baseUrl })).toMatchObject({
          status: 400,
          body: { error: expect.any(String), code: 'baseurl_not_allowed' },
        });
      }
      const saved = await request(t.url).put('/ai_assistant/settings').set(user.auth).send({ baseURL: 'http://192.168.1.20/v1' });
      expect({ status: saved.status, body: saved.body }).toEqual({
        status: 400,
        body: { error: expect.any(String), code: 'baseurl_not_allowed' },
      });
      expect(own.requests).toHaveLength(0);

      // A DNS name that resolves to loopback: known only when the socket connects.
      const name = os.hostname();
      const addresses = await lookup(name, { all: true });
      expect({ name, nonPublic: addresses.length > 0 && addresses.every((a) => isNonPublicAddress(a.address)) }).toEqual({
        name,
        nonPublic: true,
      });
      const { status, text } = await chat(t, user.auth, { baseUrl: `http://${name}:${port}/v1` });
      expect(status).toBe(200);
      expect((await readChatStream(text)).chunks).toContainEqual({ type: 'error', errorText: CHOSEN_FAILURE });
      expect(own.requests).toHaveLength(0);

      // The deployment's own URL on loopback is the operator's choice.
      expect((await chat(t, user.auth)).status).toBe(200);
      expect(deployment.requests.at(-1)?.headers.authorization).toBe(`Bearer ${DEPLOYMENT_KEY}`);
    } finally {
      await t.close();
    }
  });

  it('AI_BASEURL_ALLOW_PRIVATE=true lifts it (still without the deployment’s key)', async () => {
    const t = await startPlatformApp({ env: { ...productionEnv(), AI_BASEURL_ALLOW_PRIVATE: 'true' } });
    try {
      const user = await Factories.of(t).loggedInUser(t, { features: MANAGE });
      fresh(own).otherwise(() => ({ text: 'ok' }));
      expect((await chat(t, user.auth, { baseUrl: own.url })).status).toBe(200);
      expect(own.requests).toHaveLength(1);
      expect(own.requests[0].headers.authorization).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
