import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedSend {
  headers: http.IncomingHttpHeaders;
  body: { to: string; from: string; subject: string; body: string };
}

/**
 * A local HTTP server speaking the mail-api's `POST /v1/send`: records each call and answers like
 * the real service. `failNext(n, status)` makes the next n calls fail (retry tests).
 */
export async function startMailApiStub() {
  const sends: RecordedSend[] = [];
  let failures: { remaining: number; status: number } = { remaining: 0, status: 500 };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/send') {
        res.writeHead(404).end();
        return;
      }
      if (failures.remaining > 0) {
        failures.remaining -= 1;
        res.writeHead(failures.status, { 'Content-Type': 'application/json' }).end('{"success":false}');
        return;
      }
      sends.push({ headers: req.headers, body: JSON.parse(raw) });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ success: true, data: { emails: [], timestamp: new Date().toISOString() } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sends,
    failNext(count: number, status = 500) {
      failures = { remaining: count, status };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function tokenFromLink(html: string, path: string): string {
  const match = html.match(new RegExp(`${path}\\?token=([^"&\\s]+)`));
  if (!match) throw new Error(`no ${path} link in: ${html}`);
  return decodeURIComponent(match[1]);
}

export { waitFor } from '@app/service-kit/testing';
