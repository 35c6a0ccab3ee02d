import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import request from 'supertest';
import { freePort, startNodeProcess, waitFor, type NodeProcess } from '@app/service-kit/testing';
import { chromiumForSuite } from '@app/service-kit/testing/jest';
import { expectMailError } from './support/mail-api-helpers.js';
import { createMailTestEnv, type MailTestEnv } from './support/mail-test-app.js';
import { workerEnv } from './support/worker-process.js';

const APP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const READ_TOKEN = `read-${randomBytes(16).toString('hex')}`;
const WRITE_TOKEN = `write-${randomBytes(16).toString('hex')}`;
const QUEUE = 'mail-ops-writes';
const basic = (password: string) => `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`;
/** Words of bull-board's mutating buttons and menu items (job cards, queue actions, the bulk bar). */
const MUTATING =
  /^(retry|promote|clean|remove|delete|obliterate|empty|pause|resume|add|duplicate|edit|update|retry all|promote all|clean all)\b/i;

/**
 * The queue dashboard is read-only by default (decisions of issue #33): `MAIL_ADMIN_TOKEN` reads,
 * `MAIL_ADMIN_WRITE_TOKEN` may retry, promote and clean (each one log line with the token's
 * fingerprint), nobody may obliterate a queue or edit job data. The compiled API (`dist/main.js`) as
 * a process, so its log lines can be read; the pages rendered in headless Chromium.
 */
describe('mail-api queue dashboard: read-only by default, allowlisted and logged writes', () => {
  let env: MailTestEnv;
  let api: NodeProcess;
  let url: string;
  let redis: Redis;
  let queue: Queue;
  let delayedId: string;
  let failedId: string;

  beforeAll(async () => {
    env = await createMailTestEnv();
    redis = new Redis(env.config.redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue(QUEUE, { connection: redis, prefix: env.config.queuePrefix });
    delayedId = (await queue.add('later', { keep: 'me' }, { delay: 3_600_000 })).id ?? '';
    // One failed job: a worker of this test fails it once.
    failedId = (await queue.add('broken', { n: 1 })).id ?? '';
    const workerConnection = redis.duplicate();
    const worker = new Worker(QUEUE, (job) => (job.name === 'broken' ? Promise.reject(new Error('boom')) : Promise.resolve()), {
      connection: workerConnection,
      prefix: env.config.queuePrefix,
    });
    await waitFor(async () => ((await queue.getJobState(failedId)) === 'failed' ? true : null), 10_000, 'the failed job');
    await worker.close();
    workerConnection.disconnect();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    api = startNodeProcess('mail-api', {
      entry: path.join(APP_DIR, 'dist', 'main.js'),
      cwd: APP_DIR,
      env: { ...workerEnv(env.config), MAIL_PORT: String(port), MAIL_ADMIN_TOKEN: READ_TOKEN, MAIL_ADMIN_WRITE_TOKEN: WRITE_TOKEN },
      readyWhen: 'listening on',
      buildHint: 'npm run build -w mail-api',
    });
    await api.ready;
  }, 60_000);
  afterAll(async () => {
    await api?.kill();
    await queue?.close();
    redis?.disconnect();
    await env?.cleanup();
  });

  const put = (p: string, token: string) =>
    request(url).put(`/admin/queues/api/queues/${QUEUE}${p}`).set('Authorization', `Bearer ${token}`);

  it('shows the read token a read-only board and refuses it every write (403), the queue untouched', async () => {
    const list = await request(url).get('/admin/queues/api/queues').set('Authorization', basic(READ_TOKEN)).expect(200);
    const shown = (list.body.queues as { name: string; readOnlyMode: boolean }[]).find((q) => q.name === QUEUE);
    expect(shown?.readOnlyMode).toBe(true);
    for (const [method, p] of [
      ['put', `/${delayedId}/promote`],
      ['put', '/promote'],
      ['put', `/retry/failed`],
      ['put', `/${failedId}/retry`],
      ['put', '/clean/failed'],
      ['put', '/obliterate'],
      ['put', '/pause'],
      ['patch', `/${delayedId}/update-data`],
    ] as const) {
      const res = await request(url)[method](`/admin/queues/api/queues/${QUEUE}${p}`).set('Authorization', `Bearer ${READ_TOKEN}`).send({});
      expectMailError(res, 403, 'FORBIDDEN', /read-only/);
    }
    expect(await queue.getJobState(delayedId)).toBe('delayed');
    expect(await queue.getJobState(failedId)).toBe('failed');
  });

  it('never lets the write token obliterate, empty, pause, add or edit job data (403)', async () => {
    for (const [method, p, body] of [
      ['put', '/obliterate', {}],
      ['put', '/empty', {}],
      ['put', '/pause', {}],
      ['post', '/add', { name: 'x', data: {} }],
      ['patch', `/${delayedId}/update-data`, { jobData: { keep: 'changed' } }],
      ['patch', `/${delayedId}/delay`, { delay: 1 }],
    ] as const) {
      const res = await request(url)
        [method](`/admin/queues/api/queues/${QUEUE}${p}`)
        .set('Authorization', `Bearer ${WRITE_TOKEN}`)
        .send(body);
      expectMailError(res, 403, 'FORBIDDEN', /only retry, promote and clean/);
    }
    expect((await queue.getJob(delayedId))?.data).toEqual({ keep: 'me' });
    expect(await queue.getJobCounts('delayed', 'failed')).toEqual({ delayed: 1, failed: 1 });
  });

  it('lets the write token retry and promote, and logs each write with its fingerprint, never the token', async () => {
    const list = await request(url).get('/admin/queues/api/queues').set('Authorization', `Bearer ${WRITE_TOKEN}`).expect(200);
    expect((list.body.queues as { name: string; readOnlyMode: boolean }[]).find((q) => q.name === QUEUE)?.readOnlyMode).toBe(false);
    expect((await put(`/${failedId}/retry`, WRITE_TOKEN)).status).toBeLessThan(300);
    expect((await put(`/${delayedId}/promote`, WRITE_TOKEN)).status).toBeLessThan(300);
    expect(await queue.getJobState(failedId)).toBe('waiting');
    expect(await queue.getJobState(delayedId)).toBe('waiting');
    const fingerprint = createHash('sha256').update(WRITE_TOKEN).digest('hex').slice(0, 16);
    const writes = await waitFor(
      () => {
        const lines = api
          .output()
          .split('\n')
          .filter((line) => line.includes('queue dashboard write'));
        return lines.length >= 2 ? lines.map((line) => JSON.parse(line) as Record<string, unknown>) : null;
      },
      5_000,
      'two write log lines',
    );
    expect(writes).toEqual([
      expect.objectContaining({
        msg: 'queue dashboard write: retry',
        action: 'retry',
        queue: QUEUE,
        jobId: failedId,
        tokenFingerprint: fingerprint,
      }),
      expect.objectContaining({
        msg: 'queue dashboard write: promote',
        action: 'promote',
        queue: QUEUE,
        jobId: delayedId,
        tokenFingerprint: fingerprint,
      }),
    ]);
    expect(api.output()).not.toContain(WRITE_TOKEN);
    expect(api.output()).not.toContain(READ_TOKEN);
  });

  describe('in Chromium', () => {
    const chromium = chromiumForSuite();
    beforeAll(async () => {
      await queue.add('later-again', {}, { delay: 3_600_000 });
    });

    /** The visible buttons and menu items of the queue's delayed-jobs page, as the token sees it. */
    async function buttonsOnQueuePage(token: string): Promise<string[]> {
      const context = await chromium.browser.newContext({ httpCredentials: { username: 'operator', password: token } });
      const page = await context.newPage();
      expect((await page.goto(`${url}/admin/queues/queue/${QUEUE}?status=delayed`))?.status()).toBe(200);
      // The board is a React app: the job's name appears once its scripts ran and its API answered.
      await page.getByText('later-again').first().waitFor({ timeout: 20_000 });
      const texts = await page.locator('button:visible, [role="menuitem"]:visible').allInnerTexts();
      await context.close();
      return texts.map((t) => t.trim()).filter(Boolean);
    }

    it('renders the read-only board without a single mutating button; the writer sees them', async () => {
      const reader = await buttonsOnQueuePage(READ_TOKEN);
      expect(reader.filter((text) => MUTATING.test(text))).toEqual([]);
      const writer = await buttonsOnQueuePage(WRITE_TOKEN);
      // The same page with writes allowed has them: the check above would see them too.
      expect(writer.filter((text) => MUTATING.test(text)).length).toBeGreaterThan(0);
    }, 90_000);
  });
});
