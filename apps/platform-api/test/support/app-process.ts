import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startNodeProcess, type NodeProcess } from '@app/service-kit/testing';
import type { PlatformConfig } from '../../src/config/platform-config.js';

/**
 * The compiled entries as real child processes (`npm run start`, `npm run start:worker`; built by
 * `npm run build -w platform-api`): their own event loop, connections, signal handling and, unlike a
 * second Nest app in the Jest process, their own module-level state (passport's strategy registry).
 */
const APP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const WORKER_ENTRY = path.join(APP_DIR, 'dist', 'worker.js');
export const API_ENTRY = path.join(APP_DIR, 'dist', 'main.js');
const BUILD_HINT = 'npm run build -w platform-api';

export type WorkerProcess = NodeProcess;
export type ApiProcess = NodeProcess & { url: string };

/** The environment of a process for a test env's config (same database, Redis, queue prefix, secrets), plus overrides. */
export function processEnv(config: PlatformConfig, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    PLATFORM_DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    QUEUE_PREFIX: config.queuePrefix,
    DATA_DIR: config.dataDir,
    AUTH_JWT_SECRET: config.jwtSecret,
    CONSENT_INTEGRITY_SECRET: config.consentIntegritySecret,
    PLATFORM_APP_URL: config.appUrl,
    ...overrides,
  };
}

/** `ready` resolves once the worker logged that it consumes its queues (after its schedulers are upserted). */
export function startWorkerProcess(name: string, env: NodeJS.ProcessEnv): WorkerProcess {
  return startNodeProcess(name, { entry: WORKER_ENTRY, cwd: APP_DIR, env, readyWhen: 'platform worker consuming', buildHint: BUILD_HINT });
}

/** Another API instance on a free port; `ready` resolves once it listens. */
export async function startApiProcess(name: string, env: NodeJS.ProcessEnv): Promise<ApiProcess> {
  const port = await freePort();
  const started = startNodeProcess(name, {
    entry: API_ENTRY,
    cwd: APP_DIR,
    env: { ...env, PLATFORM_PORT: String(port) },
    readyWhen: 'platform-api listening on',
    buildHint: BUILD_HINT,
  });
  return Object.assign(started, { url: `http://127.0.0.1:${port}` });
}
