import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { UIMessageChunk } from 'ai';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { ScriptedAnthropic } from './support/scripted-anthropic.js';
import { readChatStream } from './support/scripted-openai.js';

const KEY = 'sk-ant-test-secret-0123456789';
const MODEL = 'claude-3-5-haiku-latest';
const FEATURES = ['ai_assistant.view', 'auth.roles.list', 'auth.roles.manage'];
type Chunk = UIMessageChunk & Record<string, unknown>;

/**
 * Issue #32 item 3: a deployment whose only provider is Anthropic (AI_DEFAULT_PROVIDER=anthropic),
 * against a local server speaking the Messages API (streamed events, tool use): the chat, tool and
 * object tests the OpenAI-compatible provider passes.
 */
describe('AI assistant with the anthropic provider (local Messages API server)', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let provider: ScriptedAnthropic;
  let user: Awaited<ReturnType<Factories['loggedInUser']>>;

  beforeAll(async () => {
    provider = await ScriptedAnthropic.start();
    t = await startPlatformApp({
      env: { AI_ANTHROPIC_API_KEY: KEY, AI_ANTHROPIC_BASE_URL: provider.url, AI_DEFAULT_PROVIDER: 'anthropic', AI_DEFAULT_MODEL: MODEL },
    });
    f = Factories.of(t);
    user = await f.loggedInUser(t, { features: FEATURES });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });
  beforeEach(() => provider.reset());

  async function chat(content: string) {
    const res = await fetch(`${t.url}/ai_assistant/ai/chat?agent=auth.access_assistant`, {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    return { text, ...(await readChatStream(text)) };
  }
  const roleName = async (id: string) =>
    (await t.app.get(DataSource).query('SELECT name FROM roles WHERE id = $1', [id]))[0].name as string;

  it('streams text: the Messages API called as Anthropic’s (x-api-key, streamed, system prompt, tools)', async () => {
    provider.script({ text: 'Hello from Claude' });
    const { chunks, message, done, text } = await chat('hi');
    expect(done).toBe(true);
    expect(chunks[0]).toMatchObject({ type: 'start', messageMetadata: { providerId: 'anthropic', modelId: MODEL } });
    expect(chunks.filter((c) => c.type === 'text-delta')).toHaveLength(2);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(message?.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['Hello from Claude']);
    const [sent] = provider.requests;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toMatchObject({ model: MODEL, stream: true });
    expect(JSON.stringify(sent.body.system)).toContain('access-control assistant');
    expect(sent.body.tools?.map((tool) => tool.name).sort()).toEqual(['auth__list_roles', 'auth__rename_role']);
    expect(text).not.toContain(KEY);
  });

  it('runs a read tool from a tool_use block and gives its result back as tool_result', async () => {
    const role = await f.role(user.tenant.id, { features: [] }, { name: 'claude-ops' });
    const other = await f.tenant();
    await f.role(other.id, { features: [] }, { name: 'claude-ops-elsewhere' });
    provider.script({ toolCalls: [{ name: 'auth__list_roles', args: { search: 'claude-ops' } }] }, { text: 'One role.' });
    const { chunks, text } = await chat('which ops roles?');
    const input = chunks.find((c) => c.type === 'tool-input-available') as Chunk;
    expect(input).toMatchObject({ toolName: 'auth__list_roles', input: { search: 'claude-ops' } });
    expect(chunks.find((c) => c.type === 'tool-output-available')).toMatchObject({
      toolCallId: input.toolCallId,
      output: { items: [{ id: role.id, name: 'claude-ops' }] },
    });
    expect(provider.requests).toHaveLength(2);
    const second = JSON.stringify(provider.requests[1].body.messages);
    expect(second).toContain('tool_result');
    expect(second).toContain('claude-ops');
    expect(text).not.toContain('claude-ops-elsewhere');
  });

  it('never runs a mutation tool: a pending action and data-mutation-preview; confirm renames', async () => {
    const role = await f.role(user.tenant.id, { features: [] }, { name: 'claude-before' });
    provider.script(
      { toolCalls: [{ name: 'auth__rename_role', args: { roleId: role.id, name: 'claude-after' } }] },
      { text: 'Please confirm.' },
    );
    const { chunks } = await chat('rename it');
    const preview = chunks.find((c) => c.type === 'data-mutation-preview') as Chunk;
    expect(preview.data).toEqual({
      pendingActionId: expect.any(String),
      toolName: 'auth.rename_role',
      targetEntityType: 'auth.role',
      targetRecordId: role.id,
      fieldDiff: { name: { from: 'claude-before', to: 'claude-after' } },
    });
    expect(JSON.stringify(provider.requests[1].body.messages)).toContain('pending_confirmation');
    expect(await roleName(role.id)).toBe('claude-before');
    const id = (preview.data as { pendingActionId: string }).pendingActionId;
    await request(t.url).post(`/ai_assistant/ai/actions/${id}/confirm`).set(user.auth).expect(200);
    expect(await roleName(role.id)).toBe('claude-after');
  });

  it('run-object: the agent’s schema asked of the model, the validated object with usage; invalid output is 502', async () => {
    const runObject = () =>
      request(t.url)
        .post('/ai_assistant/ai/run-object')
        .set(user.auth)
        .send({ agent: 'auth.access_summary', messages: [{ role: 'user', content: 'summarise' }] });
    provider.script({ json: { summary: 'Three roles.', roleCount: 3 }, usage: { promptTokens: 30, completionTokens: 9 } });
    const res = await runObject().expect(200);
    expect(res.body).toMatchObject({
      object: { summary: 'Three roles.', roleCount: 3 },
      usage: { inputTokens: 30, outputTokens: 9, totalTokens: 39 },
    });
    const [sent] = provider.requests;
    expect(sent.body.stream).toBeFalsy();
    // The schema went to the model (as the forced `json` tool or as output_format, whichever the SDK picks).
    expect(JSON.stringify(sent.body.tools ?? sent.body.output_format)).toContain('roleCount');

    provider.script({ json: { summary: 'x', roleCount: 'three' } });
    expect((await runObject().expect(502)).body).toEqual({ error: expect.any(String), code: 'invalid_model_output' });
  });

  it('a provider failure is an error part naming the status only', async () => {
    provider.script({ status: 400, error: 'invalid_request_error with secret details' });
    const { chunks, text } = await chat('hi');
    expect(chunks.find((c) => c.type === 'error')).toEqual({ type: 'error', errorText: 'the AI provider answered 400' });
    expect(text).not.toContain('secret details');
  });
});
