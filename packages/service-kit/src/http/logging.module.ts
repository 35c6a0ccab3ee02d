import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { resolveRequestId } from './request-id.js';

const PROBE_PATHS = new Set(['/healthz', '/readyz']);

/**
 * JSON logs (pino) with a request id on every line of a request and `X-Request-Id` on every response.
 * Probe requests are not logged: they would drown everything else.
 */
export function jsonLoggingModule(options: { service: string; level: string }): DynamicModule {
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
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    },
  });
}
