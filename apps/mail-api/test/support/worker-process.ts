import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
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

/** The compiled API entry, exactly what `npm start -w mail-api` runs. */
const API_ENTRY = path.join(APP_DIR, 'dist', 'main.js');

/** Starts `node dist/main.js` as a real child process; `ready` once it logged that it listens. */
export function startApiProcess(name: string, env: NodeJS.ProcessEnv): NodeProcess {
  return startNodeProcess(name, {
    entry: API_ENTRY,
    cwd: APP_DIR,
    env,
    readyWhen: 'mail-api listening on',
    buildHint: 'npm run build -w mail-api',
  });
}

/** The socket inodes of the local TCP endpoints bound to `port` (Linux: /proc/net/tcp and tcp6). */
function socketInodesOnPort(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (parseInt(fields[1].split(':')[1], 16) === port) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/**
 * The worker process whose TCP connection has local port `clientPort` (the port a server saw the
 * request or SMTP session come from), or null: which of several running workers is mid-effect, so a
 * test can kill exactly that one. Linux only (reads /proc).
 */
export function workerOwningConnection(workers: readonly WorkerProcess[], clientPort: number): WorkerProcess | null {
  const inodes = socketInodesOnPort(clientPort);
  for (const worker of workers) {
    const pid = worker.child.pid;
    if (pid === undefined || worker.child.exitCode !== null) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return worker;
    }
  }
  return null;
}
