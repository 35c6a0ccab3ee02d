import http from 'node:http';

export interface SseFrame {
  /** `comment` for `: text` frames, `data` for `data: ...` frames. */
  kind: 'comment' | 'data';
  text: string;
  /** The frame's `id:` and `event:` lines, when it has them. */
  id?: string;
  event?: string;
  /** Parsed JSON of a data frame. */
  data?: Record<string, unknown> & { id: string; payload: Record<string, unknown>; timestamp: number; organizationId: string | null };
}

export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  frames: SseFrame[];
  /** Resolves with the first frame (already received or to come) matching `predicate`. */
  next(predicate: (frame: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  /** The raw text received so far. */
  raw(): string;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  close(): void;
}

/**
 * A minimal EventSource over node's http.get: resolves once the response headers are in, then parses
 * frames (blank-line separated) as they arrive. Non-200 answers resolve too, with the body as raw text.
 */
export function connectSse(baseUrl: string, path: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, baseUrl), { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      res.setEncoding('utf8');
      const frames: SseFrame[] = [];
      const waiters: { predicate: (f: SseFrame) => boolean; resolve: (f: SseFrame) => void }[] = [];
      let raw = '';
      let buffer = '';
      res.on('data', (chunk: string) => {
        raw += chunk;
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame = parseFrame(block);
          if (!frame) continue;
          frames.push(frame);
          for (const waiter of [...waiters]) {
            if (waiter.predicate(frame)) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve(frame);
            }
          }
        }
      });
      res.on('error', () => undefined);
      const ended = new Promise<void>((resolveEnd) => res.once('end', () => resolveEnd()));
      resolve({
        ended,
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        raw: () => raw,
        next(predicate, timeoutMs = 10_000) {
          const found = frames.find(predicate);
          if (found) return Promise.resolve(found);
          return new Promise((resolveFrame, rejectFrame) => {
            const timer = setTimeout(() => rejectFrame(new Error(`no matching SSE frame; received: ${JSON.stringify(raw)}`)), timeoutMs);
            waiters.push({
              predicate,
              resolve: (frame) => {
                clearTimeout(timer);
                resolveFrame(frame);
              },
            });
          });
        },
        close() {
          req.destroy();
        },
      });
    });
    req.on('error', reject);
  });
}

function parseFrame(block: string): SseFrame | null {
  const lines = block.split('\n').filter((l) => l !== '');
  if (lines.length === 0) return null;
  const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
  if (data.length) {
    const text = data.join('\n');
    const field = (name: string) =>
      lines
        .find((l) => l.startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .replace(/^ /, '');
    return { kind: 'data', text, data: JSON.parse(text), id: field('id'), event: field('event') };
  }
  return { kind: 'comment', text: lines.map((l) => l.replace(/^: ?/, '')).join('\n') };
}
