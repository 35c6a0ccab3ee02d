import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { ScriptedOpenAI } from './support/scripted-openai.js';

const CHAT_FEATURES = ['ai_assistant.view', 'auth.roles.list', 'auth.roles.manage'];

/** Our request body is `{messages: [{role, content}]}`: a `useChat` client maps its UIMessages with this hook. */
const toPlatformBody = ({ messages }: { messages: UIMessage[] }) => ({
  body: {
    messages: messages.map((message) => ({
      role: message.role,
      content: message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
    })),
  },
});

/**
 * Issue #32 item 2: POST /ai_assistant/ai/chat read by the `ai` package's own client side: the
 * `DefaultChatTransport` that `useChat` uses (fetch, SSE parsing, chunk validation) and
 * `readUIMessageStream`, which assembles the assistant `UIMessage` a UI renders. No hand-written parser.
 */
describe('AI chat read by the AI SDK’s chat client (DefaultChatTransport + readUIMessageStream)', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let provider: ScriptedOpenAI;
  let user: Awaited<ReturnType<Factories['loggedInUser']>>;

  beforeAll(async () => {
    provider = await ScriptedOpenAI.start();
    t = await startPlatformApp({ env: { AI_OPENAI_API_KEY: 'sk-test', AI_OPENAI_BASE_URL: provider.url } });
    f = Factories.of(t);
    user = await f.loggedInUser(t, { features: CHAT_FEATURES });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });
  beforeEach(() => provider.reset());

  /** One `useChat` turn: the transport posts, the SDK assembles the assistant message. */
  async function turn(text: string, headers: Record<string, string> = user.auth): Promise<UIMessage> {
    const transport = new DefaultChatTransport<UIMessage>({
      api: `${t.url}/ai_assistant/ai/chat?agent=auth.access_assistant`,
      headers,
      prepareSendMessagesRequest: toPlatformBody,
    });
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-1',
      messageId: undefined,
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text }] }],
      abortSignal: undefined,
    });
    let message: UIMessage | undefined;
    for await (const state of readUIMessageStream({ stream })) message = state;
    if (!message) throw new Error('no assistant message');
    return message;
  }

  it('text: one text part, and the start metadata', async () => {
    provider.script({ text: ['Hello', ' from', ' the platform'] });
    const message = await turn('hi');
    expect(message.role).toBe('assistant');
    expect(message.parts.filter((p) => p.type === 'text')).toEqual([{ type: 'text', text: 'Hello from the platform', state: 'done' }]);
    expect(message.metadata).toMatchObject({ agentId: 'auth.access_assistant', providerId: 'openai' });
  });

  it('a read tool: the tool part with its input and output, then the answer', async () => {
    const role = await f.role(user.tenant.id, { features: [] }, { name: 'sdk-readers' });
    provider.script({ toolCalls: [{ name: 'auth__list_roles', args: { search: 'sdk-readers' } }] }, { text: 'One role.' });
    const message = await turn('which roles?');
    const tool = message.parts.find((p) => p.type === 'tool-auth__list_roles');
    expect(tool).toMatchObject({
      type: 'tool-auth__list_roles',
      state: 'output-available',
      input: { search: 'sdk-readers' },
      output: { items: [{ id: role.id, name: 'sdk-readers' }] },
    });
    expect(message.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['One role.']);
  });

  it('a mutation tool: the tool call (pending confirmation), the data-mutation-preview part, the text; nothing renamed', async () => {
    const role = await f.role(user.tenant.id, { features: [] }, { name: 'sdk-before' });
    provider.script(
      { toolCalls: [{ name: 'auth__rename_role', args: { roleId: role.id, name: 'sdk-after' } }] },
      { text: 'Please confirm.' },
    );
    const message = await turn('rename it');
    const types = message.parts.map((p) => p.type);
    expect(types).toEqual(expect.arrayContaining(['tool-auth__rename_role', 'data-mutation-preview', 'text']));
    expect(types.indexOf('tool-auth__rename_role')).toBeLessThan(types.indexOf('text'));
    const preview = message.parts.find((p) => p.type === 'data-mutation-preview') as { id: string; data: Record<string, unknown> };
    expect(preview.data).toEqual({
      pendingActionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      toolName: 'auth.rename_role',
      targetEntityType: 'auth.role',
      targetRecordId: role.id,
      fieldDiff: { name: { from: 'sdk-before', to: 'sdk-after' } },
    });
    expect(preview.id).toBe(preview.data.pendingActionId);
    expect(message.parts.find((p) => p.type === 'tool-auth__rename_role')).toMatchObject({
      state: 'output-available',
      input: { roleId: role.id, name: 'sdk-after' },
      output: { status: 'pending_confirmation', pendingActionId: preview.data.pendingActionId },
    });
    expect(message.parts.find((p) => p.type === 'text')).toMatchObject({ text: 'Please confirm.' });
    const [stored] = await t.app.get(DataSource).query('SELECT name FROM roles WHERE id = $1', [role.id]);
    expect(stored.name).toBe('sdk-before');
  });

  it('the transport surfaces an HTTP error (401) as the SDK does: a rejected request, no message', async () => {
    await expect(turn('hi', {})).rejects.toThrow(/unauthorized/);
  });
});
