import { ERROR_STATUS, ErrorCode, type FieldError } from '@app/contracts';

export interface DomainErrorOptions {
  /** HTTP status; defaults to the status of a generic code. */
  status?: number;
  details?: FieldError[];
  suggestion?: string;
  /** Extra response headers (e.g. `Retry-After`). */
  headers?: Record<string, string>;
}

/**
 * The one error type services throw. It carries a machine-readable code and a message meant for the
 * client; each app's exception filter maps it to that app's body. Never put secrets in the message.
 */
export class DomainError extends Error {
  readonly status: number;
  readonly details?: FieldError[];
  readonly suggestion?: string;
  readonly headers?: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = options.status ?? ERROR_STATUS[code] ?? 500;
    this.details = options.details;
    this.suggestion = options.suggestion;
    this.headers = options.headers;
  }

  static badRequest(message: string, details?: FieldError[]): DomainError {
    return new DomainError(ErrorCode.BadRequest, message, { details });
  }
  static notFound(message = 'not found'): DomainError {
    return new DomainError(ErrorCode.NotFound, message);
  }
  static forbidden(message = 'forbidden'): DomainError {
    return new DomainError(ErrorCode.Forbidden, message);
  }
  static unauthorized(message = 'unauthorized'): DomainError {
    return new DomainError(ErrorCode.Unauthorized, message);
  }
  static conflict(message: string): DomainError {
    return new DomainError(ErrorCode.Conflict, message);
  }
}
