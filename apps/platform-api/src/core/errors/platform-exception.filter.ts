import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ERROR_STATUS, type PlatformErrorBody } from '@app/contracts';
import { isDatabaseUnavailable, normalizeError, type NormalizedError } from '@app/service-kit';
import { serviceUnavailable } from './service-unavailable.js';

const logger = new Logger('PlatformExceptionFilter');

/** Codes a client branches on (e.g. `reserved_key`); the generic ones only repeat the status. */
function isTypedCode(code: string): boolean {
  return !(code in ERROR_STATUS);
}

export function sendError(host: ArgumentsHost, exception: unknown, render: (e: NormalizedError) => object): void {
  const ctx = host.switchToHttp();
  const res = ctx.getResponse<Response>();
  const req = ctx.getRequest<Request & { id?: string }>();
  // The database unreachable is the service unavailable (503, Retry-After), wherever it surfaced.
  const unavailable = isDatabaseUnavailable(exception);
  if (unavailable) logger.warn({ err: (exception as Error).message, reqId: req.id, path: req.path }, 'database unavailable');
  const error = normalizeError(unavailable ? serviceUnavailable() : exception);
  if (error.unexpected) {
    logger.error({ err: exception, reqId: req.id, path: req.path }, 'unexpected error');
  }
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  res.status(error.status).json(render(error));
}

/** Platform error body: `{error}` (plus `code` for typed codes and `details` for validation). */
export function platformErrorBody(error: NormalizedError): PlatformErrorBody {
  return {
    error: error.message,
    ...(isTypedCode(error.code) ? { code: error.code } : {}),
    ...(error.details ? { details: error.details } : {}),
  };
}

@Catch()
export class PlatformExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    sendError(host, exception, platformErrorBody);
  }
}

/**
 * For the routes whose failures are `{ok: false, error}` (login, feature-check, refresh, reset
 * confirm). Rate-limit refusals keep the plain `{error}` body (platform-api.md "Errors" 1).
 */
@Catch()
export class OkFalseExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    sendError(host, exception, (error) => (error.status === 429 ? platformErrorBody(error) : { ok: false, ...platformErrorBody(error) }));
  }
}
