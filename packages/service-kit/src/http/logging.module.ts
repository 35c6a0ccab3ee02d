import { Global, Inject, Injectable, Module, type DynamicModule, type LoggerService } from '@nestjs/common';
import { pino, type Level, type Logger as Pino } from 'pino';

const PROBE_PATHS = ['/healthz', '/readyz'];

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
 * The request log: one JSON line per finished request (`request completed`, with the request id,
 * method, redacted URL, status and time; `request errored` for a 5xx), except probes, which would
 * drown everything else. Headers are never logged (authorization, cookies). `createHttpApp`'s request
 * envelope asks `logs(url)` when a request arrives and calls `completed` when its response is sent.
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

  /** Whether a request to `url` gets a line: not a probe, and the `info` level on. */
  logs(url: string): boolean {
    return !isProbe(url) && this.logger.pino.isLevelEnabled('info');
  }

  completed(id: string, method: string | undefined, url: string, statusCode: number, milliseconds: number): void {
    const line = {
      reqId: id,
      req: { id, method, url: redactRequestUrl(url, this.secretPathPrefixes) },
      res: { statusCode },
      responseTime: Math.round(milliseconds),
    };
    if (statusCode >= 500) this.logger.pino.error(line, 'request errored');
    else this.logger.pino.info(line, 'request completed');
  }
}

/** `/healthz` or `/readyz`, with or without a query string (no allocation: every request asks). */
function isProbe(url: string): boolean {
  for (const path of PROBE_PATHS) {
    if (url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 63) /* ? */) return true;
  }
  return false;
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
