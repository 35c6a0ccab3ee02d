// Small network and environment probes shared by scripts/start.mjs and bench/run.mjs.
import { accessSync, constants } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** True when something accepts a TCP connection on host:port within `timeoutMs`. */
export function tcpAccepts(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Resolves when the Redis at `url` answers PING; rejects with the reason otherwise. */
export async function redisPing(url, timeoutMs = 1000) {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } finally {
    client.disconnect();
  }
}

export async function redisAnswers(url, timeoutMs) {
  return redisPing(url, timeoutMs).then(
    () => true,
    () => false,
  );
}

/** True when GET `url` answers 2xx within `timeoutMs`. */
export async function httpOk(url, timeoutMs = 1000) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Polls `check` until it returns true; false when `timeoutMs` passes first. */
export async function waitUntil(check, timeoutMs, intervalMs = 200) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(intervalMs);
  }
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The absolute path of an executable on PATH, or null. */
export function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

export function isLoopback(host) {
  return ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);
}

/** A URL safe to print: its password replaced by `***`. */
export function redactUrl(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '<invalid url>';
  }
}
