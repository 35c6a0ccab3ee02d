import { Readable } from 'node:stream';
import { StreamableFile } from '@nestjs/common';
import { JsonToSseTransformStream, UI_MESSAGE_STREAM_HEADERS } from 'ai';
import type { ChatStream } from './chat.service.js';

/** The headers of the AI SDK's UI message stream protocol besides its content type (`@Header` values). */
export const UI_STREAM_PROTOCOL_HEADER = [
  'x-vercel-ai-ui-message-stream',
  UI_MESSAGE_STREAM_HEADERS['x-vercel-ai-ui-message-stream'],
] as const;
export const UI_STREAM_CACHE_HEADER = ['Cache-Control', 'no-cache, no-transform'] as const;
export const UI_STREAM_BUFFERING_HEADER = ['X-Accel-Buffering', 'no'] as const;

/**
 * The SSE frames of a UI message stream as a Node readable. Frames produced in one turn of the event
 * loop go out as one chunk (one socket write for a burst of deltas, not one per event), which adds no
 * delay beyond that turn; reading pauses while the client is slower than the run (backpressure).
 */
class SseBody extends Readable {
  private readonly reader: ReadableStreamDefaultReader<string>;
  private buffer = '';
  private scheduled: NodeJS.Immediate | null = null;
  private pumping = false;
  private wake: (() => void) | null = null;

  constructor(frames: ReadableStream<string>) {
    super({ encoding: 'utf8' });
    this.reader = frames.getReader();
  }

  override _read(): void {
    this.wake?.();
    this.wake = null;
    if (!this.pumping) void this.pump();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.wake?.();
    this.reader.cancel().catch(() => undefined);
    callback(err);
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      for (;;) {
        const { done, value } = await this.reader.read();
        if (this.destroyed) return;
        if (done) break;
        this.buffer += value;
        this.scheduled ??= setImmediate(() => this.flushBuffer());
        if (this.readableLength > this.readableHighWaterMark) await new Promise<void>((resolve) => (this.wake = resolve));
      }
      if (this.scheduled) clearImmediate(this.scheduled);
      this.flushBuffer();
      this.push(null);
    } catch (err) {
      this.destroy(err as Error);
    }
  }

  private flushBuffer(): void {
    this.scheduled = null;
    if (this.buffer.length === 0 || this.destroyed) return;
    const frames = this.buffer;
    this.buffer = '';
    this.push(frames);
  }
}

/**
 * A chat stream as a response body, framed by the SDK's own serializer (`data: {json}` events, then
 * `data: [DONE]`), as a `StreamableFile` so controllers never touch the HTTP adapter. When the client
 * goes away Nest destroys the body, which stops the run (no more model or tool calls).
 */
export function uiMessageStreamBody(chat: ChatStream): StreamableFile {
  const frames = chat.stream.pipeThrough(new JsonToSseTransformStream());
  const body = new SseBody(frames);
  body.once('close', () => {
    if (!body.readableEnded) chat.abort();
  });
  return new StreamableFile(body, { type: UI_MESSAGE_STREAM_HEADERS['content-type'] });
}
