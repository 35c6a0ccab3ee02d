import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
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

/**
 * JSON logs (pino) with a request id on every line of a request and `X-Request-Id` on every response.
 * Probe requests are not logged: they would drown everything else. Secrets stay out: authorization
 * and cookie headers are never logged, and URLs go through `redactRequestUrl`.
 */
export function jsonLoggingModule(options: {
  service: string;
  level: string;
  /** Paths whose next segment is a credential (a signed link token), redacted in logs. */
  secretPathPrefixes?: readonly string[];
}): DynamicModule {
  const secretPathPrefixes = options.secretPathPrefixes ?? [];
  return LoggerModule.forRoot({
    pinoHttp: {
      level: options.level,
      base: { service: options.service },
      genReqId: (req: IncomingMessage, res: ServerResponse) => {
        const id = resolveRequestId(req.headers['x-request-id']);
        res.setHeader('X-Request-Id', id);
        return id;
      },
      autoLogging: { ignore: (req: IncomingMessage) => PROBE_PATHS.has((req.url ?? '').split('?')[0]) },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: redactRequestUrl(req.url, secretPathPrefixes),
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    },
  });
}
