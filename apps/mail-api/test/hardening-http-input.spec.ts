import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import type { MailProjectCredentials } from '@app/contracts';
import { redactRequestUrl } from '@app/service-kit';
import { freePort, startNodeProcess, waitFor } from '@app/service-kit/testing';
import { UnsubscribeLinks } from '../src/modules/unsubscribe/unsubscribe-links.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { createMailTestEnv, startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { workerEnv } from './support/worker-process.js';

const APP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function deepJson(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/**
 * Sends the headers of a request announcing `contentLength` bytes, then only `sent` bytes of it, and
 * resolves with the status the server answers. A server that reads the body before it authenticates
 * never answers (it waits for the rest); one that authenticates first answers at once.
 */
function answerBeforeBody(
  url: string,
  headers: Record<string, string>,
  contentLength: number,
  sent: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/contacts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(contentLength), ...headers },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    req.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
    req.write('{"email":"' + 'a'.repeat(Math.max(0, sent - 10)));
  });
}

describe('mail input refused before routes: size per route, authentication first, nesting', () => {
  let t: MailTestApp;
  let project: MailProjectCredentials;
  beforeAll(async () => {
    t = await startMailApp();
    project = await createProject(t, 'Input');
  });
  afterAll(async () => {
    await t.close();
  });

  it('an unauthenticated request is refused (401) before its body is read or parsed', async () => {
    const res = await answerBeforeBody(t.url, {}, 10 * 1024 * 1024, 1024);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body).error.code).toBe('UNAUTHORIZED');
    const badKey = await answerBeforeBody(t.url, bearer(`sk_${'0'.repeat(48)}`), 10 * 1024 * 1024, 1024);
    expect(badKey.status).toBe(401);
    expect(JSON.parse(badKey.body).error.code).toBe('INVALID_API_KEY');
  });

  it('an unauthenticated 10 MB body of garbage is a 401, not a parse error', async () => {
    const res = await request(t.url)
      .post('/v1/send')
      .set('Content-Type', 'application/json')
      .send('x'.repeat(10 * 1024 * 1024));
    expectMailError(res, 401, 'UNAUTHORIZED', 'missing API key', { suggestion: /Bearer/ });
  });

  it('bodies are limited to 1 MB except on POST /v1/send (16 MB)', async () => {
    const big = { email: 'big@example.com', data: { note: 'x'.repeat(2 * 1024 * 1024) } };
    const contacts = await request(t.url).post('/contacts').set(bearer(project.secretKey)).send(big);
    expectMailError(contacts, 413, 'PAYLOAD_TOO_LARGE', 'request entity too large');
    // Over 1 MB but under 16 MB: /v1/send parses it and answers with its own validation, not 413.
    const send = await request(t.url)
      .post('/v1/send')
      .set(bearer(project.secretKey))
      .send({ to: 'a@example.com', from: 'x@unverified.example', subject: 's', body: 'b', data: { pad: 'x'.repeat(2 * 1024 * 1024) } });
    expect(send.status).not.toBe(413);
    expect(send.status).toBeGreaterThanOrEqual(400);
    expect(send.status).toBeLessThan(500);
  });

  it('JSON nested 2,000 levels deep is a 422 VALIDATION_ERROR, not a 500', async () => {
    const res = await request(t.url)
      .post('/contacts')
      .set(bearer(project.secretKey))
      .set('Content-Type', 'application/json')
      .send(deepJson(2000));
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', errors: [expect.objectContaining({ code: 'maxDepth' })] });
  });
});

describe('request logs keep secrets out', () => {
  it('redactRequestUrl hides query values and the token segment after a secret prefix', () => {
    expect(redactRequestUrl('/contacts?search=jane@example.com&limit=5')).toBe('/contacts?search=[redacted]&limit=[redacted]');
    expect(redactRequestUrl('/unsubscribe/abc.def', ['/unsubscribe/'])).toBe('/unsubscribe/[redacted]');
    expect(redactRequestUrl('/unsubscribe/abc/x?y=1', ['/unsubscribe/'])).toBe('/unsubscribe/[redacted]/x?y=[redacted]');
    expect(redactRequestUrl('/healthz')).toBe('/healthz');
  });

  it('the running API logs neither unsubscribe tokens, query values nor the API key', async () => {
    const env = await createMailTestEnv();
    const port = await freePort();
    const api = startNodeProcess('mail-api', {
      entry: path.join(APP_DIR, 'dist', 'main.js'),
      cwd: APP_DIR,
      env: { ...workerEnv(env.config), MAIL_PORT: String(port), LOG_LEVEL: 'info' },
      readyWhen: 'listening on',
      buildHint: 'npm run build -w mail-api',
    });
    try {
      await api.ready;
      const url = `http://127.0.0.1:${port}`;
      const token = new UnsubscribeLinks(env.config).tokenFor(
        '00000000-0000-4000-8000-000000000001',
        '00000000-0000-4000-8000-000000000002',
      );
      await request(url).get('/healthz').expect(200);
      await request(url).get(`/unsubscribe/${token}`);
      const contacts = await request(url)
        .get('/contacts?search=secret-search-text')
        .set(bearer(`sk_${'1'.repeat(48)}`));
      // Both requests are logged when their responses close; probes are not.
      await waitFor(
        () => (api.output().includes('/contacts?search=') && api.output().includes('/unsubscribe/') ? true : null),
        5_000,
        'two request log lines',
      );
      const output = api.output();
      expect(output).toContain('/unsubscribe/[redacted]');
      expect(output).not.toContain(token);
      expect(output).not.toContain('secret-search-text');
      expect(output).not.toContain('1'.repeat(48));
      const lines = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map(
          (line) =>
            JSON.parse(line) as { msg?: string; reqId?: string; req?: { url?: string; method?: string }; res?: { statusCode?: number } },
        );
      const requestLines = lines.filter((line) => line.msg === 'request completed');
      expect(requestLines.map((line) => line.req?.url)).toEqual(['/unsubscribe/[redacted]', '/contacts?search=[redacted]']);
      expect(requestLines[1]).toMatchObject({ reqId: contacts.headers['x-request-id'], req: { method: 'GET' }, res: { statusCode: 401 } });
      // The same close listener feeds the latency histogram, probes included.
      const metrics = await request(url).get('/metrics').expect(200);
      expect(metrics.text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} 1\b/);
      expect(metrics.text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/contacts"[^}]*status_code="401"[^}]*\} 1\b/);
    } finally {
      await api.kill();
      await env.cleanup();
    }
  });
});
