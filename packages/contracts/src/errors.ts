/**
 * Machine-readable error codes. Services throw `DomainError`s carrying one of these; each app maps
 * them once to its own HTTP error body (platform `{error}`, mail `{success: false, error: {...}}`).
 */
export const ErrorCode = {
  ValidationError: 'VALIDATION_ERROR',
  InvalidJson: 'INVALID_JSON',
  BadRequest: 'BAD_REQUEST',
  Unauthorized: 'UNAUTHORIZED',
  Forbidden: 'FORBIDDEN',
  NotFound: 'NOT_FOUND',
  Conflict: 'CONFLICT',
  PreconditionFailed: 'PRECONDITION_FAILED',
  PayloadTooLarge: 'PAYLOAD_TOO_LARGE',
  UnprocessableEntity: 'UNPROCESSABLE_ENTITY',
  RateLimitExceeded: 'RATE_LIMIT_EXCEEDED',
  NotReady: 'NOT_READY',
  InternalError: 'INTERNAL_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode] | (string & {});

/** The HTTP status each generic code maps to; feature codes name their status explicitly. */
export const ERROR_STATUS: Record<string, number> = {
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNPROCESSABLE_ENTITY: 422,
  RATE_LIMIT_EXCEEDED: 429,
  NOT_READY: 503,
  INTERNAL_ERROR: 500,
};

/** One field-level validation problem (mail `error.errors[]`, platform `details[]`). */
export interface FieldError {
  field: string;
  message: string;
  code: string;
}

/** Platform error bodies. */
export interface PlatformErrorBody {
  error: string;
  code?: string;
  details?: FieldError[];
}
export interface PlatformOkFalseErrorBody {
  ok: false;
  error: string;
  details?: FieldError[];
}

/** Mail error envelope (mail-api.md "Errors", decisions.md "Mail"). */
export interface MailErrorBody {
  success: false;
  error: {
    code: string;
    message: string;
    statusCode: number;
    requestId: string;
    errors?: FieldError[];
    suggestion?: string;
  };
  timestamp: string;
  message: string;
}
