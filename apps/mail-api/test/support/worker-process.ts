import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MailConfig } from '../../src/config/mail-config.js';

const APP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The compiled worker entry, exactly what `npm run start:worker` runs (built by `npm run build -w mail-api`). */
export const WORKER_ENTRY = path.join(APP_DIR, 'dist', 'worker.js');

export interface WorkerProcess {
  name: string;
  child: ChildProcess;
  /** Everything it printed so far (for failure messages). */
  output(): string;
  /** Resolves once the worker logged that it consumes its queues. */
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

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
    ...(config.smtpUrl ? { MAIL_SMTP_URL: config.smtpUrl } : {}),
    ...overrides,
  };
}

/**
 * Starts `node dist/worker.js` as a real child process (own event loop, own Redis and Postgres
 * connections, killable with SIGKILL). Logs at info level so readiness can be seen; they are kept
 * in memory, not printed.
 */
export function startWorkerProcess(name: string, env: NodeJS.ProcessEnv): WorkerProcess {
  if (!existsSync(WORKER_ENTRY)) throw new Error(`${WORKER_ENTRY} is missing: run npm run build -w mail-api first`);
  const child = spawn(process.execPath, [WORKER_ENTRY], { cwd: APP_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const onChunk = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('mail worker consuming')) markReady();
  };
  child.stdout!.on('data', onChunk);
  child.stderr!.on('data', onChunk);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // Settled once: by the ready line, or by an exit before it (never an unhandled rejection later).
  const readyOrExit = new Promise<void>((resolve, reject) => {
    void ready.then(resolve);
    void exited.then(({ code, signal }) => reject(new Error(`worker ${name} exited (${signal ?? code}) before it was ready:\n${output}`)));
  });
  return {
    name,
    child,
    output: () => output,
    ready: readyOrExit,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
