import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplicationContext } from '@nestjs/common';
import request from 'supertest';
import {
  createTestDatabase,
  type NodeProcess,
  startInProcessWorker,
  startNodeProcess,
  type TestDatabase,
  uniqueQueuePrefix,
  waitFor,
} from '@app/service-kit/testing';
import { WorkerModule } from '../src/worker.module.js';
import { Factories, login, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/** The built mail-api (turbo builds it before this app's tests: `platform-api#test` depends on `mail-api#build`). */
const MAIL_API_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../mail-api');
const MAIL_ENTRIES = { migrate: 'dist/cli/migrate.js', api: 'dist/main.js', worker: 'dist/worker.js' };

function startMailProcess(name: string, entry: string, env: NodeJS.ProcessEnv, readyWhen: string): NodeProcess {
  return startNodeProcess(name, {
    entry: path.join(MAIL_API_DIR, entry),
    cwd: MAIL_API_DIR,
    env,
    readyWhen,
    buildHint: 'npm run build -w mail-api',
  });
}

/**
 * An `.eml` made searchable: its bodies are quoted-printable (soft line breaks and `=3D` would hide the
 * link) and long headers are folded onto continuation lines.
 */
function readableMessage(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\r?\n[ \t]+/g, ' ');
}

/**
 * Issue #11 item 18: the platform's password-reset email through the real mail-api, configured the
 * way `npm start` configures both (scripts/start.mjs): NODE_ENV unset, no MAIL_SMTP_URL (the
 * outbox), the bootstrap key pair as the platform's PLATFORM_MAIL_API_KEY, and the platform's default
 * sender `no-reply@example.com`, whose domain nobody can verify on a developer's machine.
 */
describe('platform worker → real mail-api (zero-config outbox)', () => {
  let mailDb: TestDatabase;
  let dataDir: string;
  let outboxDir: string;
  const mailProcesses: NodeProcess[] = [];
  let t: PlatformTestApp;
  let platformWorker: INestApplicationContext;

  beforeAll(async () => {
    mailDb = await createTestDatabase('mail');
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'mail-e2e-'));
    outboxDir = path.join(dataDir, 'outbox');
    const secretKey = `sk_${randomBytes(24).toString('hex')}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      LOG_LEVEL: 'info',
      MAIL_DATABASE_URL: mailDb.url,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: uniqueQueuePrefix('mail'),
      DATA_DIR: dataDir,
      MAIL_OUTBOX_DIR: outboxDir,
      MAIL_PORT: '0',
      MAIL_BOOTSTRAP_SECRET_KEY: secretKey,
      MAIL_BOOTSTRAP_PUBLIC_KEY: `pk_${randomBytes(24).toString('hex')}`,
    };
    const migrate = startMailProcess('mail-migrate', MAIL_ENTRIES.migrate, env, '"service":"mail-api"');
    mailProcesses.push(migrate);
    await migrate.ready;
    expect((await migrate.exited).code).toBe(0);

    const api = startMailProcess('mail-api', MAIL_ENTRIES.api, env, 'mail-api listening on');
    mailProcesses.push(api);
    await api.ready;
    // MAIL_PORT=0: the port the system chose, as the API logs it.
    const mailUrl = /mail-api listening on (http:\/\/[\d.]+:\d+)/.exec(api.output())![1];
    const worker = startMailProcess('mail-worker', MAIL_ENTRIES.worker, env, 'mail worker consuming');
    mailProcesses.push(worker);
    await worker.ready;

    t = await startPlatformApp({ env: { PLATFORM_MAIL_API_URL: mailUrl, PLATFORM_MAIL_API_KEY: secretKey } });
    platformWorker = await startInProcessWorker(WorkerModule.forRoot(t.config));
  }, 120_000);

  afterAll(async () => {
    await platformWorker?.close();
    await t?.close();
    await Promise.all(mailProcesses.map((p) => p.kill('SIGTERM')));
    await mailDb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** The delivered `.eml` (decoded) whose reset link goes to `email`, once the mail worker wrote it. */
  function deliveredResetEmail(email: string): Promise<string> {
    return waitFor(
      () => {
        if (!existsSync(outboxDir)) return null;
        const messages = readdirSync(outboxDir)
          .filter((file) => file.endsWith('.eml'))
          .map((file) => readableMessage(readFileSync(path.join(outboxDir, file), 'utf8')));
        return messages.find((raw) => raw.includes(`To: ${email}`) && raw.includes('/reset-password?token=')) ?? null;
      },
      60_000,
      `a reset email to ${email} in ${outboxDir}`,
    );
  }

  it('a password reset reaches the outbox through /v1/send, unsigned with the reason, and its link resets the password', async () => {
    const f = Factories.of(t);
    const tenant = await f.tenant();
    const role = await f.role(tenant.id, { features: [] });
    const user = await f.user(tenant, { roleIds: [role.id] });
    await request(t.url)
      .post('/auth/reset')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email })
      .expect(200, { ok: true });

    const raw = await deliveredResetEmail(user.email);
    expect(raw).toMatch(/^From: <?no-reply@example\.com>?$/m);
    expect(raw).toMatch(/^Subject: Reset your password$/m);
    expect(raw).toMatch(/^X-Mail-Api-Unsigned: sender domain example\.com is not verified \(outbox transport, development\)$/m);
    expect(raw).not.toMatch(/^DKIM-Signature:/m);

    const link = /href="http:\/\/localhost:3000\/reset-password\?token=([A-Za-z0-9_-]+)"/.exec(raw);
    expect(link).not.toBeNull();
    const token = link![1];
    const confirmed = await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token, password: 'a-brand-new-password' })
      .expect(200);
    expect(confirmed.body).toEqual({ ok: true, redirect: '/login' });
    await login(t, user.email, 'a-brand-new-password');
  }, 90_000);
});
