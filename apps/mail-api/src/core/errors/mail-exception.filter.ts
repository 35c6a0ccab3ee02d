import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { MailErrorBody } from '@app/contracts';
import { normalizeError, redactRequestUrl, resolveRequestId, type NormalizedError } from '@app/service-kit';
import { SECRET_PATH_PREFIXES } from '../http/secret-paths.js';

const logger = new Logger('MailExceptionFilter');

/** The mail error envelope (mail-api.md "Errors" plus decisions.md's top-level `message`). */
export function mailErrorBody(error: NormalizedError, requestId: string, now = new Date()): MailErrorBody {
  return {
    success: false,
    error: {
      code: error.code,
      message: error.message,
      statusCode: error.status,
      requestId,
      ...(error.details ? { errors: error.details } : {}),
      ...(error.suggestion ? { suggestion: error.suggestion } : {}),
    },
    timestamp: now.toISOString(),
    message: error.message,
  };
}

/**
 * The id pino-http gave the request (also sent as `X-Request-Id`). A failure raised before the logging
 * middleware ran has none yet, so one is made here and sent too: the body and header always agree.
 */
function requestIdOf(req: Request & { id?: unknown }, res: Response): string {
  if (typeof req.id === 'string' && req.id) return req.id;
  const sent = res.getHeader('X-Request-Id');
  if (typeof sent === 'string' && sent) return sent;
  const id = resolveRequestId(req.headers['x-request-id']);
  if (!res.headersSent) res.setHeader('X-Request-Id', id);
  return id;
}

/** Renders every error of the mail API, whatever threw it, as the envelope. */
@Catch()
export class MailExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<Response>();
    const req = ctx.getRequest<Request & { id?: unknown }>();
    const error = normalizeError(exception);
    const requestId = requestIdOf(req, res);
    if (error.unexpected) {
      // The stack goes to the log only; the client gets the generic message and the id to quote.
      logger.error({ err: exception, reqId: requestId, path: redactRequestUrl(req.path, SECRET_PATH_PREFIXES) }, 'unexpected error');
    }
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
    res.status(error.status).json(mailErrorBody(error, requestId));
  }
}
