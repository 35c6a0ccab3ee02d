import { ErrorCode } from '@app/contracts';
import { DomainError } from '@app/service-kit';

/** What a client is told to wait before retrying while the database is unreachable (seconds). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * 503 with `Retry-After`: the platform cannot answer right now because something it depends on (the
 * database) failed. Rendered in the route's own error shape by its exception filter (`{error}`, or
 * `{ok: false, error}`); the cause is logged, never shown.
 */
export function serviceUnavailable(): DomainError {
  return new DomainError(ErrorCode.NotReady, 'service temporarily unavailable, try again shortly', {
    status: 503,
    headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
  });
}
