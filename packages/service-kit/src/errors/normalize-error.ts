import { HttpException, HttpStatus } from '@nestjs/common';
import { ErrorCode, type FieldError } from '@app/contracts';
import { DomainError } from './domain-error.js';

/** What every exception becomes before an app renders it into its own body shape. */
export interface NormalizedError {
  status: number;
  code: string;
  message: string;
  details?: FieldError[];
  suggestion?: string;
  headers?: Record<string, string>;
  /** True for failures we did not anticipate: logged with their stack, shown to the client generically. */
  unexpected: boolean;
}

const CODE_BY_STATUS: Record<number, string> = {
  400: ErrorCode.BadRequest,
  401: ErrorCode.Unauthorized,
  403: ErrorCode.Forbidden,
  404: ErrorCode.NotFound,
  405: ErrorCode.BadRequest,
  409: ErrorCode.Conflict,
  412: ErrorCode.PreconditionFailed,
  413: ErrorCode.PayloadTooLarge,
  415: ErrorCode.BadRequest,
  422: ErrorCode.UnprocessableEntity,
  429: ErrorCode.RateLimitExceeded,
  503: ErrorCode.NotReady,
};

/**
 * Maps domain errors, Nest HTTP exceptions and the body parser's errors (malformed JSON, too large)
 * to one shape. Anything else is an unexpected 500 whose details never reach the client.
 */
export function normalizeError(exception: unknown): NormalizedError {
  if (exception instanceof DomainError) {
    return {
      status: exception.status,
      code: exception.code,
      message: exception.message,
      details: exception.details,
      suggestion: exception.suggestion,
      headers: exception.headers,
      unexpected: exception.status >= 500 && exception.status !== 503,
    };
  }
  if (exception instanceof HttpException) {
    // Nest maps the body parser's errors to HttpExceptions and keeps the original as `cause`.
    if ((exception.cause as { type?: string } | undefined)?.type === 'entity.parse.failed') {
      return { status: 400, code: ErrorCode.InvalidJson, message: 'malformed JSON body', unexpected: false };
    }
    const status = exception.getStatus();
    const response = exception.getResponse();
    const detail = typeof response === 'string' ? response : (response as { message?: unknown }).message;
    // Nest's own exceptions carry a string or, for its validation errors, a list of strings.
    const message = typeof detail === 'string' ? detail : Array.isArray(detail) ? detail.join('; ') : exception.message;
    return { status, code: CODE_BY_STATUS[status] ?? ErrorCode.InternalError, message, unexpected: status >= 500 };
  }
  const bodyParserError = exception as { type?: string; status?: number; expose?: boolean; message?: string };
  if (bodyParserError?.type === 'entity.parse.failed') {
    return { status: 400, code: ErrorCode.InvalidJson, message: 'malformed JSON body', unexpected: false };
  }
  if (bodyParserError?.expose && typeof bodyParserError.status === 'number' && bodyParserError.status < 500) {
    const status = bodyParserError.status;
    return {
      status,
      code: CODE_BY_STATUS[status] ?? ErrorCode.BadRequest,
      message: bodyParserError.message ?? HttpStatus[status] ?? 'bad request',
      unexpected: false,
    };
  }
  return { status: 500, code: ErrorCode.InternalError, message: 'internal server error', unexpected: true };
}
