import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@app/service-kit/testing';
import { createMailTestEnv, type MailTestEnv } from './support/mail-test-app.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** `npm start` (scripts/start.mjs) for the mail service only, on this test's database, Redis prefix and port. */
describe('npm start supervises the services it runs', () => {
  let env: MailTestEnv;
  let start: ChildProcess;
  let output = '';
  let port: number;
  let inboundPort: number;
  beforeAll(async () => {
    env = await createMailTestEnv();
    port = await freePort();
    // Not the default 2526: another run (or a developer's npm start) may hold it.
    inboundPort = await freePort();
    start = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts/start.mjs')], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        START_APPS: 'mail',
        START_SKIP_BUILD: '1',
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        MAIL_PORT: String(port),
        MAIL_INBOUND_SMTP_PORT: String(inboundPort),
        MAIL_DATABASE_URL: env.config.databaseUrl,
        REDIS_URL: env.config.redisUrl,
        QUEUE_PREFIX: env.config.queuePrefix,
        DATA_DIR: env.dataDir,
        MAIL_BOOTSTRAP_SECRET_KEY: `sk_${randomBytes(24).toString('hex')}`,
        MAIL_BOOTSTRAP_PUBLIC_KEY: `pk_${randomBytes(24).toString('hex')}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    start.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    start.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => (output.includes('Press Ctrl+C to stop.') ? true : null), 60_000, `npm start to be ready:\n${output}`);
  });
  afterAll(async () => {
    if (start.exitCode === null) {
      start.kill('SIGTERM');
      await new Promise((resolve) => start.once('close', resolve));
    }
    await env.cleanup();
  });

  function pidsOf(label: string): number[] {
    return [...output.matchAll(new RegExp(`${label} started \\(pid (\\d+)\\)`, 'g'))].map((m) => Number(m[1]));
  }

  it('turns the bounce and complaint listener on (bounces.localhost) and prints where it listens', async () => {
    expect(output).toContain(`smtp://localhost:${inboundPort}`);
    expect(output).toContain('reports to bounces+<token>@bounces.localhost');
    await waitFor(
      () => (output.includes(`inbound SMTP listener for bounce and complaint reports on port ${inboundPort}`) ? true : null),
      30_000,
      `the worker's listener:\n${output}`,
    );
  }, 60_000);

  it('restarts a SIGKILLed worker with backoff, says so, and keeps the API up', async () => {
    // The first worker consuming first: killed before it says so, the count below could never reach two.
    await waitFor(() => (output.includes('mail worker consuming') ? true : null), 60_000, `the first worker to consume:\n${output}`);
    const [workerPid] = pidsOf('mail-worker');
    const [apiPid] = pidsOf('mail-api');
    expect(workerPid).toBeGreaterThan(0);
    process.kill(workerPid, 'SIGKILL');
    // Generous waits: the property is that it restarts and consumes, not how fast on a loaded CI box.
    await waitFor(() => (pidsOf('mail-worker').length === 2 ? true : null), 45_000, `a restarted worker:\n${output}`);
    expect(output).toContain('mail-worker was killed by SIGKILL unexpectedly: restarting it in 1 s');
    expect(pidsOf('mail-worker')[1]).not.toBe(workerPid);
    // The API was never stopped, and still answers.
    expect(pidsOf('mail-api')).toEqual([apiPid]);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    // The new worker is consuming again.
    await waitFor(
      () => (output.split('mail worker consuming').length === 3 ? true : null),
      60_000,
      `the new worker to consume:\n${output}`,
    );
  }, 150_000);

  it('SIGTERM stops everything cleanly (exit 0), with no restart', async () => {
    start.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => start.once('close', resolve));
    expect(code).toBe(0);
    // The services stopped by the shutdown are not restarted: only the SIGKILL above was.
    expect(output.split('restarting it in').length - 1).toBe(1);
    expect(pidsOf('mail-worker')).toHaveLength(2);
  });
});
