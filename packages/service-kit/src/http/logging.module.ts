import type { IncomingMessage, ServerResponse } from 'node:http';
import { Global, Inject, Injectable, Module, type DynamicModule, type LoggerService } from '@nestjs/common';
import { pino, type Level, type Logger as Pino } from 'pino';
import { resolveRequestId } from './request-id.js';

const PROBE_PATHS = new Set(['/healthz', '/readyz']);

/**
 * The URL as request logs show it: query values redacted (they carry tokens, emails and search text)
 * and, after each of `secretPathPrefixes` (e.g. `/unsubscribe/`), the path segment that is a credential.
 */
export function redactRequestUrl(url: string, secretPathPrefixes: readonly string[] = []): string {
  const queryStart = url.indexOf('?');
  let path = queryStart === -1 ? url : url.slice(0, queryStart);
  for (const prefix of secretPathPrefixes) {
    if (path.startsWith(prefix) && path.length > prefix.length) {
      const rest = path.slice(prefix.length);
      const slash = rest.indexOf('/');
      path = `${prefix}[redacted]${slash === -1 ? '' : rest.slice(slash)}`;
    }
  }
  if (queryStart === -1) return path;
  const keys = url
    .slice(queryStart + 1)
    .split('&')
    .filter(Boolean)
    .map((pair) => `${pair.split('=')[0]}=[redacted]`);
  return `${path}?${keys.join('&')}`;
}

export interface JsonLoggingOptions {
  service: string;
  level: string;
  /** Paths whose next segment is a credential (a signed link token), redacted in logs. */
  secretPathPrefixes?: readonly string[];
}

const LOGGING_OPTIONS = Symbol('LOGGING_OPTIONS');

/**
 * The app's one pino logger, as Nest's `LoggerService` (`app.useLogger(app.get(AppLogger))`) and for
 * the request log. Nest's `Logger` passes the context (the class name) last; an object first is merged
 * into the line, so `logger.warn({jobId, err}, 'job failed')` stays structured. No per-request child
 * logger and no AsyncLocalStorage: each costs more per request than the whole of Express
 * (bench/README.md); a line about a request carries the request id (`reqId`) explicitly.
 */
@Injectable()
export class AppLogger implements LoggerService {
  readonly pino: Pino;

  constructor(@Inject(LOGGING_OPTIONS) options: JsonLoggingOptions) {
    this.pino = pino({ level: options.level, base: { service: options.service } });
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const rest = [...params];
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    if (message instanceof Error) {
      this.pino[level]({ context, err: message }, typeof rest[0] === 'string' ? rest[0] : message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ context, ...message }, typeof rest[0] === 'string' ? rest[0] : undefined);
    } else {
      // Nest's `logger.error(message, stack, context)`: the stack is a field, not a format argument.
      const stack = level === 'error' && typeof rest[0] === 'string' && rest[0].includes('\n    at ') ? rest[0] : undefined;
      this.pino[level]({ context, ...(stack ? { stack } : {}) }, String(message));
    }
  }
}

/**
 * The request log, as an Express middleware installed first: a request id on every request
 * (`req.id`, `X-Request-Id`, echoing a valid incoming one) and one JSON line per finished request
 * (`request completed`, with method, redacted URL, status and time), except probes, which would
 * drown everything else. Headers are never logged (authorization, cookies).
 */
@Injectable()
export class RequestLog {
  private readonly secretPathPrefixes: readonly string[];

  constructor(
    private readonly logger: AppLogger,
    @Inject(LOGGING_OPTIONS) options: JsonLoggingOptions,
  ) {
    this.secretPathPrefixes = options.secretPathPrefixes ?? [];
  }

  readonly middleware = (req: IncomingMessage & { id?: string }, res: ServerResponse, next: () => void): void => {
    const id = resolveRequestId(req.headers['x-request-id']);
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const url = req.url ?? '';
    if (!PROBE_PATHS.has(url.split('?')[0]) && this.logger.pino.isLevelEnabled('info')) {
      const started = performance.now();
      res.once('finish', () => this.completed(req, res, id, url, started));
    }
    next();
  };

  private completed(req: IncomingMessage, res: ServerResponse, id: string, url: string, started: number): void {
    const line = {
      reqId: id,
      req: { id, method: req.method, url: redactRequestUrl(url, this.secretPathPrefixes) },
      res: { statusCode: res.statusCode },
      responseTime: Math.round(performance.now() - started),
    };
    if (res.statusCode >= 500) this.logger.pino.error(line, 'request errored');
    else this.logger.pino.info(line, 'request completed');
  }
}

@Global()
@Module({})
class JsonLoggingModule {}

/** JSON logs (pino): the app's `AppLogger` and the request log (`RequestLog`, installed by `createHttpApp`). */
export function jsonLoggingModule(options: JsonLoggingOptions): DynamicModule {
  return {
    module: JsonLoggingModule,
    providers: [{ provide: LOGGING_OPTIONS, useValue: options }, AppLogger, RequestLog],
    exports: [AppLogger, RequestLog],
  };
}
