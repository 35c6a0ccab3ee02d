import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS } from '../queue/redis.js';
import { MetricsRegistry } from './metrics-registry.js';
import { METRICS_CHALLENGE, METRICS_UNAUTHORIZED_MESSAGE, metricsScrapeAllowed } from './metrics-token.js';

const CHECK_TIMEOUT_MS = 2000;

export interface WorkerMetricsServer {
  server: Server;
  /** `http://127.0.0.1:<port>` (the port actually bound: 0 picks a free one). */
  url: string;
  close(): Promise<void>;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function answers(probe: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  try {
    await withTimeout(probe(), CHECK_TIMEOUT_MS);
    return 'ok';
  } catch {
    return 'unavailable';
  }
}

/**
 * The worker's small HTTP server (no Nest, no Express): `GET /metrics` (Prometheus text; with
 * `METRICS_TOKEN` only for `Authorization: Bearer <token>`, 401 otherwise), `GET /healthz`
 * (the process and its event loop answer) and `GET /readyz` (Postgres and Redis answer; 503 otherwise),
 * the same probes as the APIs, so the worker's container and pod have probes too.
 */
export async function startWorkerMetricsServer(app: INestApplicationContext, port: number, host = '0.0.0.0'): Promise<WorkerMetricsServer> {
  const metrics = app.get(MetricsRegistry, { strict: false });
  const dataSource = app.get(DataSource, { strict: false });
  const redis = app.get<Redis>(REDIS, { strict: false });
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'application/json', '{"error":"method not allowed"}');
    if (path === '/healthz') return reply(200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      void Promise.all([answers(() => dataSource.query('SELECT 1')), answers(() => redis.ping())]).then(([database, redisCheck]) => {
        const ok = database === 'ok' && redisCheck === 'ok';
        reply(
          ok ? 200 : 503,
          'application/json',
          JSON.stringify({ status: ok ? 'ok' : 'unavailable', checks: { database, redis: redisCheck } }),
        );
      });
      return;
    }
    if (path === '/metrics') {
      if (!metricsScrapeAllowed(req.headers.authorization, metrics.options.token)) {
        return reply(401, 'application/json', JSON.stringify({ error: METRICS_UNAUTHORIZED_MESSAGE }), {
          'WWW-Authenticate': METRICS_CHALLENGE,
        });
      }
      metrics.render().then(
        (text) => reply(200, metrics.contentType, text),
        () => reply(500, 'application/json', '{"error":"metrics unavailable"}'),
      );
      return;
    }
    reply(404, 'application/json', '{"error":"not found"}');
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
