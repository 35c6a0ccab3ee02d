/**
 * A local OpenAI-compatible provider for tests and benchmarks: a real `node:http` server answering
 * `POST {base}/chat/completions` (streamed SSE chunks when `stream` is true, one JSON body otherwise)
 * and `GET {base}/models`, from a script the test sets. No network outside the machine.
 *
 * Written with erasable TypeScript only (no parameter properties, no enums) and `node:` imports, so
 * Node runs it as is (type stripping): `bench/ai-chat.mjs` imports this same file.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseJsonEventStream, readUIMessageStream, type UIMessage, type UIMessageChunk, uiMessageChunkSchema } from 'ai';

export interface ScriptedUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ScriptedToolCall {
  /** The tool's name as the model sees it (`auth__list_roles`). */
  name: string;
  /** Arguments: an object (serialized) or a raw string (to send invalid JSON). */
  args: unknown;
  id?: string;
}

/** One answer of the provider. `delayMs`: wait before the first byte; `chunkDelayMs`: between chunks. */
export type ScriptedReply = { usage?: ScriptedUsage; delayMs?: number; chunkDelayMs?: number } & (
  | { text: string | string[] }
  | { toolCalls: ScriptedToolCall[]; text?: string }
  /** Object mode: the content is this value as JSON (or `raw` text as it is, e.g. invalid JSON). */
  | { json: unknown }
  | { raw: string }
  | { status: number; error?: string }
  /** Never answers (until the client gives up or the server closes). */
  | { hang: true }
);

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: {
    model?: string;
    stream?: boolean;
    messages?: { role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string }[];
    tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
    response_format?: { type: string; json_schema?: { name?: string; schema?: unknown; strict?: boolean } };
    stream_options?: { include_usage?: boolean };
    [key: string]: unknown;
  };
}

type Responder = (request: RecordedRequest) => ScriptedReply;

const DEFAULT_USAGE: ScriptedUsage = { promptTokens: 11, completionTokens: 7 };

/**
 * What both scripted providers share: the local server (a handler's error becomes a 500 in the
 * provider's error shape), the script of replies, the recorded requests, the base URL and closing.
 * A provider subclass answers requests in `handle`.
 */
export class ScriptedProviderServer<TRequest> {
  /** Every request of the provider's protocol received, in order. */
  readonly requests: TRequest[] = [];
  protected readonly queue: ScriptedReply[] = [];
  protected readonly server: Server;
  protected counter = 0;
  private port = 0;

  protected constructor(errorBody: (message: string) => unknown) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorBody(err.message)));
      });
    });
  }

  /** Listens on a free local port. */
  protected async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The base URL to configure (`AI_OPENAI_BASE_URL`, `AI_ANTHROPIC_BASE_URL`). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Queues answers, used one per request in order. */
  script(...replies: ScriptedReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Forgets the script and the recorded requests. */
  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
  }

  get pending(): number {
    return this.queue.length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Answers one request; the subclass speaks the provider's protocol. */
  protected handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return Promise.reject(new Error(`no handler for ${req.method} ${req.url} (${res.statusCode})`));
  }
}

export class ScriptedOpenAI extends ScriptedProviderServer<RecordedRequest> {
  /** Requests to any other path (answered 404), e.g. another provider's protocol pointed here. */
  readonly otherRequests: { method: string; path: string; headers: IncomingMessage['headers'] }[] = [];
  private fallback: Responder | null = null;
  private readonly open = new Set<ServerResponse>();

  private constructor() {
    super((message) => ({ error: { message } }));
    this.server.keepAliveTimeout = 60_000;
  }

  static async start(): Promise<ScriptedOpenAI> {
    const provider = new ScriptedOpenAI();
    await provider.listen();
    return provider;
  }

  /** Answers requests once the queue is empty (none: 500 "script exhausted"). */
  otherwise(responder: Responder | null): this {
    this.fallback = responder;
    return this;
  }

  /** Forgets the script, the fallback and the recorded requests. */
  reset(): void {
    super.reset();
    this.otherRequests.length = 0;
    this.fallback = null;
  }

  /** Responses still open (a hanging answer stays open until the client goes away). */
  get openResponses(): number {
    return this.open.size;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    await super.close();
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && path.endsWith('/models')) {
      json(res, 200, { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] });
      return;
    }
    if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
      this.otherRequests.push({ method: req.method ?? '', path, headers: req.headers });
      json(res, 404, { error: { message: `no route ${req.method} ${path}` } });
      return;
    }
    const body = JSON.parse(await readBody(req)) as RecordedRequest['body'];
    const request: RecordedRequest = { path, headers: req.headers, body };
    this.requests.push(request);
    const reply = this.queue.shift() ?? this.fallback?.(request) ?? { status: 500, error: 'script exhausted' };
    await this.answer(request, reply, res);
  }

  private async answer(request: RecordedRequest, reply: ScriptedReply, res: ServerResponse): Promise<void> {
    this.open.add(res);
    res.once('close', () => this.open.delete(res));
    if ('hang' in reply) return;
    if (reply.delayMs) await sleep(reply.delayMs);
    if ('status' in reply) {
      json(res, reply.status, { error: { message: reply.error ?? 'scripted failure', type: 'server_error' } });
      return;
    }
    const id = `chatcmpl-${++this.counter}`;
    const model = request.body.model ?? 'gpt-4o-mini';
    const usage = reply.usage ?? DEFAULT_USAGE;
    if (request.body.stream)
      await this.stream(res, { id, model, usage, reply, includeUsage: request.body.stream_options?.include_usage === true });
    else json(res, 200, completion(id, model, usage, reply));
  }

  private async stream(
    res: ServerResponse,
    input: { id: string; model: string; usage: ScriptedUsage; reply: ScriptedReply; includeUsage: boolean },
  ): Promise<void> {
    const { id, model, usage, reply } = input;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = async (choice: object | null, extra: object = {}) => {
      const chunk = {
        id,
        object: 'chat.completion.chunk',
        created: now(),
        model,
        choices: choice ? [{ index: 0, ...choice }] : [],
        ...extra,
      };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
    };
    await send({ delta: { role: 'assistant', content: '' }, finish_reason: null });
    for (const piece of textPieces(reply)) await send({ delta: { content: piece }, finish_reason: null });
    const calls = 'toolCalls' in reply ? reply.toolCalls : [];
    for (const [index, call] of calls.entries()) {
      const callId = call.id ?? `call_${this.counter}_${index}`;
      const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
      await send({
        delta: { tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }] },
        finish_reason: null,
      });
      await send({ delta: { tool_calls: [{ index, function: { arguments: args } }] }, finish_reason: null });
    }
    await send({ delta: {}, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' });
    if (input.includeUsage) await send(null, { usage: usageBody(usage) });
    res.end('data: [DONE]\n\n');
  }
}

function textPieces(reply: ScriptedReply): string[] {
  if ('text' in reply && reply.text !== undefined) return Array.isArray(reply.text) ? reply.text : [reply.text];
  if ('json' in reply) return [JSON.stringify(reply.json)];
  if ('raw' in reply) return [reply.raw];
  return [];
}

function completion(id: string, model: string, usage: ScriptedUsage, reply: ScriptedReply): object {
  const calls = 'toolCalls' in reply ? reply.toolCalls : [];
  const content = textPieces(reply).join('');
  return {
    id,
    object: 'chat.completion',
    created: now(),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: content.length > 0 ? content : null,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((call, index) => ({
                  id: call.id ?? `call_${id}_${index}`,
                  type: 'function',
                  function: { name: call.name, arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args) },
                })),
              }
            : {}),
        },
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: usageBody(usage),
  };
}

function usageBody(usage: ScriptedUsage): object {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const now = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A chat response body read back with the AI SDK's own reader (the client side of the protocol). */
export interface ReadChatStream {
  chunks: UIMessageChunk[];
  /** The assistant message the SDK's client assembles from the chunks. */
  message: UIMessage | undefined;
  /** The body ended with `data: [DONE]`. */
  done: boolean;
}

export async function readChatStream(body: string): Promise<ReadChatStream> {
  const events = parseJsonEventStream({ stream: new Response(body).body as ReadableStream<Uint8Array>, schema: uiMessageChunkSchema });
  const chunks: UIMessageChunk[] = [];
  for await (const event of events) {
    if (!event.success) throw event.error;
    chunks.push(event.value);
  }
  let message: UIMessage | undefined;
  for await (const state of readUIMessageStream({ stream: ReadableStream.from(chunks), terminateOnError: false })) message = state;
  return { chunks, message, done: body.trimEnd().endsWith('data: [DONE]') };
}
