import { Readable } from 'node:stream';
import { StreamableFile } from '@nestjs/common';

/** Frames a client has not read yet, beyond which it is dropped (an EventSource reconnects). */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * A Server-Sent Events body: comment and data frames pushed into a readable stream that Nest pipes to
 * the response (as a `StreamableFile`, so controllers and services never touch the HTTP adapter).
 * When the client disconnects Nest destroys the stream, which runs the `onClose` callbacks once.
 */
export class SseStream extends Readable {
  private readonly closeCallbacks: (() => void)[] = [];

  constructor() {
    super({ encoding: 'utf8' });
    this.once('close', () => {
      for (const callback of this.closeCallbacks.splice(0)) callback();
    });
  }

  /** `: text` (clients ignore comments; they keep proxies from closing an idle connection). */
  comment(text: string): void {
    this.write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
  }

  /**
   * `data: <json>`: JSON escapes line breaks, so the frame is one line. With `id`, an `id:` line first
   * (what the browser sends back as `Last-Event-ID` when it reconnects; ids are `<digits>-<digits>`).
   */
  data(value: unknown, id?: string): void {
    this.write(`${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(value)}\n\n`);
  }

  /** A named event (`event: <name>`), which an EventSource dispatches to `addEventListener(name)`. */
  event(name: string, value: unknown, id?: string): void {
    this.write(`event: ${name}\n${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(value)}\n\n`);
  }

  onClose(callback: () => void): void {
    if (this.destroyed) callback();
    else this.closeCallbacks.push(callback);
  }

  /** Ends the stream (server shutdown); the client sees the end of the response and reconnects. */
  finish(): void {
    if (!this.destroyed && !this.readableEnded) this.push(null);
  }

  /** The response, with the headers an event stream needs besides its content type. */
  toResponse(): StreamableFile {
    return new StreamableFile(this, { type: 'text/event-stream; charset=utf-8' });
  }

  override _read(): void {
    // Frames are pushed as events happen; nothing to pull.
  }

  private write(frame: string): void {
    if (this.destroyed || this.readableEnded) return;
    if (this.readableLength > MAX_BUFFERED_BYTES) {
      this.destroy();
      return;
    }
    this.push(frame);
  }
}
