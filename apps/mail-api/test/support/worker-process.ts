import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeProcess, type NodeProcess } from '@app/service-kit/testing';
import type { MailConfig } from '../../src/config/mail-config.js';

const APP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The compiled worker entry, exactly what `npm run start:worker` runs (built by `npm run build -w mail-api`). */
export const WORKER_ENTRY = path.join(APP_DIR, 'dist', 'worker.js');

/** `ready` resolves once the worker logged that it consumes its queues (after its schedulers are upserted). */
export type WorkerProcess = NodeProcess;

/** The environment of a worker process for a test env's config, plus overrides (MAIL_* names). */
export function workerEnv(config: MailConfig, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    MAIL_DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    QUEUE_PREFIX: config.queuePrefix,
    DATA_DIR: config.dataDir,
    MAIL_PUBLIC_URL: config.publicUrl,
    MAIL_LINK_SECRET: config.linkSecret,
    MAIL_DOMAIN_RECHECK_SECONDS: String(config.domainRecheckSeconds),
    ...(config.smtpUrl ? { MAIL_SMTP_URL: config.smtpUrl } : {}),
    ...(config.dnsServers.length > 0 ? { MAIL_DNS_SERVERS: config.dnsServers.join(',') } : {}),
    ...overrides,
  };
}

/**
 * Starts `node dist/worker.js` as a real child process (own event loop, own Redis and Postgres
 * connections, killable with SIGTERM or SIGKILL). Logs at info level so readiness can be seen; they
 * are kept in memory, not printed.
 */
export function startWorkerProcess(name: string, env: NodeJS.ProcessEnv): WorkerProcess {
  return startNodeProcess(name, {
    entry: WORKER_ENTRY,
    cwd: APP_DIR,
    env,
    readyWhen: 'mail worker consuming',
    buildHint: 'npm run build -w mail-api',
  });
}
