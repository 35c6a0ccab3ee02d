/**
 * A local server speaking Anthropic's Messages API for tests, scripted like ScriptedOpenAI (same reply
 * shapes): `POST {base}/messages`, streamed as Anthropic's named SSE events (`message_start`,
 * `content_block_start|delta|stop` with `text_delta` and `input_json_delta`, `message_delta`,
 * `message_stop`) when `stream` is true, one message body otherwise. Object mode answers however the SDK
 * asked: a forced `json` tool gets a `tool_use` block, `output_format` gets the JSON as text.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ScriptedProviderServer, type ScriptedReply, type ScriptedUsage } from './scripted-openai.js';

export interface RecordedAnthropicRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: {
    model?: string;
    stream?: boolean;
    max_tokens?: number;
    system?: unknown;
    messages?: { role: string; content: unknown }[];
    tools?: { name: string; description?: string; input_schema?: unknown }[];
    tool_choice?: { type: string; name?: string };
    output_format?: unknown;
    [key: string]: unknown;
  };
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown; json: string };

const DEFAULT_USAGE: ScriptedUsage = { promptTokens: 11, completionTokens: 7 };

export class ScriptedAnthropic extends ScriptedProviderServer<RecordedAnthropicRequest> {
  private constructor() {
    super((message) => ({ type: 'error', error: { type: 'api_error', message } }));
  }

  static async start(): Promise<ScriptedAnthropic> {
    const provider = new ScriptedAnthropic();
    await provider.listen();
    return provider;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'POST' || !path.endsWith('/messages')) {
      json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${path}` } });
      return;
    }
    const body = JSON.parse(await readBody(req)) as RecordedAnthropicRequest['body'];
    const request: RecordedAnthropicRequest = { path, headers: req.headers, body };
    this.requests.push(request);
    const reply = this.queue.shift() ?? { status: 500, error: 'script exhausted' };
    if ('hang' in reply) return;
    if ('status' in reply) {
      json(res, reply.status, { type: 'error', error: { type: 'api_error', message: reply.error ?? 'scripted failure' } });
      return;
    }
    const id = `msg_${++this.counter}`;
    const blocks = this.blocks(request, reply);
    const usage = reply.usage ?? DEFAULT_USAGE;
    const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
    const model = body.model ?? 'claude-test';
    if (body.stream) this.stream(res, { id, model, blocks, usage, stopReason });
    else
      json(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: blocks.map((b) =>
          b.type === 'text' ? { type: 'text', text: b.text } : { type: 'tool_use', id: b.id, name: b.name, input: b.input },
        ),
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
      });
  }

  private blocks(request: RecordedAnthropicRequest, reply: ScriptedReply): Block[] {
    const blocks: Block[] = [];
    const toolUse = (name: string, input: unknown, raw?: string): Block => ({
      type: 'tool_use',
      id: `toolu_${this.counter}_${blocks.length}`,
      name,
      input,
      json: raw ?? JSON.stringify(input),
    });
    const forcedJsonTool = request.body.tool_choice?.type === 'tool' && request.body.tool_choice.name === 'json';
    if (('json' in reply || 'raw' in reply) && forcedJsonTool) {
      blocks.push('json' in reply ? toolUse('json', reply.json) : toolUse('json', {}, reply.raw));
      return blocks;
    }
    const text =
      'text' in reply && reply.text !== undefined
        ? [reply.text].flat()
        : 'json' in reply
          ? [JSON.stringify(reply.json)]
          : 'raw' in reply
            ? [reply.raw]
            : [];
    if (text.length > 0) blocks.push({ type: 'text', text: text.join('') });
    for (const call of 'toolCalls' in reply ? reply.toolCalls : []) {
      blocks.push(typeof call.args === 'string' ? toolUse(call.name, {}, call.args) : toolUse(call.name, call.args));
    }
    return blocks;
  }

  private stream(
    res: ServerResponse,
    input: { id: string; model: string; blocks: Block[]; usage: ScriptedUsage; stopReason: string },
  ): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('message_start', {
      message: {
        id: input.id,
        type: 'message',
        role: 'assistant',
        model: input.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: input.usage.promptTokens, output_tokens: 1 },
      },
    });
    for (const [index, block] of input.blocks.entries()) {
      if (block.type === 'text') {
        send('content_block_start', { index, content_block: { type: 'text', text: '' } });
        // Two deltas, as a model streams words.
        const half = Math.ceil(block.text.length / 2);
        for (const piece of [block.text.slice(0, half), block.text.slice(half)].filter(Boolean)) {
          send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
        }
      } else {
        send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: block.json } });
      }
      send('content_block_stop', { index });
    }
    send('message_delta', {
      delta: { stop_reason: input.stopReason, stop_sequence: null },
      usage: { output_tokens: input.usage.completionTokens },
    });
    send('message_stop', {});
    res.end();
  }
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
