import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { CanActivate, INestApplication, Type } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import type { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import type { TrustProxySetting } from './client-address.js';
import { weakEtag } from './etag.js';
import { AppLogger, RequestLog } from './logging.module.js';
import { DEFAULT_BODY_LIMIT, RequestBodyGuard } from './request-body.js';
import { resolveRequestId } from './request-id.js';
import { bindRouteGuards } from './route-guards.js';
import { HttpMetrics } from '../metrics/http-metrics.js';

export interface HttpAppOptions {
  /** Applies the app's pipes, filters and OpenAPI; shared by main.ts and the e2e tests. */
  configure: (app: NestExpressApplication) => void | Promise<void>;
  /** Largest JSON / form body a route accepts unless it declares its own with `@BodyLimit` (default DEFAULT_BODY_LIMIT, 1 MB). */
  bodyLimit?: string;
  /** Status for input refused before validation (NUL characters, deep nesting): the app's validation status. */
  invalidInputStatus: 400 | 422;
  /** Proxies allowed to set `X-Forwarded-For` (`TRUST_PROXY`); none by default. */
  trustProxy: TrustProxySetting;
  /** The app's authentication guard (a provider of its modules), on every route not `@Public()`. */
  authGuard: Type<CanActivate>;
}

/**
 * Creates a Nest app on Express with JSON logs, graceful shutdown (SIGTERM: stop accepting, drain
 * in-flight requests, close pools) and the app's own configuration.
 */
export async function createHttpApp(module: unknown, options: HttpAppOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module as never, { bufferLogs: true, bodyParser: false });
  app.useLogger(app.get(AppLogger));
  const adapter = app.getHttpAdapter() as ExpressAdapter;
  // Nest's Express adapter runs its request hook in the first Express layer, which every request
  // passes anyway: the envelope costs no layer of its own.
  adapter.setOnRequestHook(requestEnvelope(app.get(RequestLog), optional(app, HttpMetrics), adapter as unknown as ShutdownFlag));
  app.disable('x-powered-by');
  app.set('etag', weakEtag);
  app.set('trust proxy', options.trustProxy);
  // Bodies are parsed inside each route's pipeline, after authentication (see RequestBodyGuard).
  bindRouteGuards(app, {
    authenticate: app.get(options.authGuard),
    parseBody: new RequestBodyGuard(app.get(Reflector), {
      defaultLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
      invalidInputStatus: options.invalidInputStatus,
    }),
  });
  app.enableShutdownHooks();
  await options.configure(app);
  return app;
}

/** Listens, and on close lets idle keep-alive sockets go so shutdown does not wait for clients. */
export async function listen(app: INestApplication, port: number, host = '0.0.0.0'): Promise<string> {
  await app.listen(port, host);
  const server = app.getHttpServer() as Server;
  server.keepAliveTimeout = 65_000; // longer than typical load-balancer idle timeouts
  // close() (SIGTERM) ends the sockets idle at that moment, but a request in flight then answered on a
  // kept-alive socket (its response started before the shutdown, without `Connection: close`) left
  // it idle for keepAliveTimeout: 65 s of shutdown, past a pod's grace period. From close() on, a
  // socket that goes idle is ended at once (ops-graceful-shutdown.spec.ts, the held request).
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    server.keepAliveTimeout = 1;
    return close(callback);
  };
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return `http://127.0.0.1:${actualPort}`;
}

/** A provider of the app if one of its modules has it (`HttpMetrics`: only with the MetricsModule). */
function optional<T>(app: INestApplication, type: new (...args: never[]) => T): T | undefined {
  try {
    return app.get(type, { strict: false });
  } catch {
    return undefined;
  }
}

/** Nest's Express adapter sets `isShuttingDown` in `beforeClose` (SIGTERM); private in its types. */
interface ShutdownFlag {
  isShuttingDown?: boolean;
}

/**
 * What every request gets before routing, as Nest's request hook (not a middleware layer of its
 * own), since each Express layer and each response listener costs (bench/README.md, "HTTP stack"):
 * - a request id (`req.id`, `X-Request-Id`, echoing a valid incoming one);
 * - from SIGTERM on, `Connection: close` on every response, so each keep-alive client learns that
 *   the connection ends after the answer it waits for and sends its next request elsewhere (without
 *   it a busy keep-alive connection carries request after request while `server.close()` waits for
 *   it, until the process is killed and the requests in flight on it are reset);
 * - one listener for when the response closes, which writes the request log line (not for probes)
 *   and observes the HTTP latency histogram (when the app has the MetricsModule).
 */
function requestEnvelope(requestLog: RequestLog, httpMetrics: HttpMetrics | undefined, adapter: ShutdownFlag) {
  return (req: IncomingMessage & { id?: string }, res: ServerResponse, next: () => void): void => {
    const id = resolveRequestId(req.headers['x-request-id']);
    req.id = id;
    res.setHeader('X-Request-Id', id);
    if (adapter.isShuttingDown) res.setHeader('Connection', 'close');
    const url = req.url ?? '';
    const logged = requestLog.logs(url);
    if (logged || httpMetrics) {
      const started = performance.now();
      res.on('close', () => {
        const milliseconds = performance.now() - started;
        if (logged && res.writableFinished) requestLog.completed(id, req.method, url, res.statusCode, milliseconds);
        httpMetrics?.observe(req, res, milliseconds / 1000);
      });
    }
    next();
  };
}
