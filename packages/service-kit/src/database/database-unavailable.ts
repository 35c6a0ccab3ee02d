/**
 * Whether an error says the database cannot be reached or used right now, as opposed to a statement
 * that failed on its own (a constraint, a syntax error): a refused or dropped connection, a server
 * shutting down or refusing connections, a pool that could not hand out a client in time.
 *
 * Such a failure is the service being unavailable (503 with Retry-After), not a client error and not
 * a bug. Recognized: socket errors of the connection; Postgres errors of severity FATAL or PANIC
 * (they end the session: "database is not currently accepting connections", "terminating connection
 * due to administrator command"); SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown,
 * cannot connect now) and 53300 (too many connections); and pg's own messages for a client whose
 * connection ended or a pool that timed out. Errors wrapped by TypeORM (`driverError`) or as `cause`,
 * and every error of an AggregateError (a connect that tried several addresses), are looked into.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return unavailable(err, 0);
}

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

interface ErrorFields {
  code?: unknown;
  severity?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
  errors?: unknown;
}

function unavailable(err: unknown, depth: number): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as ErrorFields;
  const code = typeof e.code === 'string' ? e.code : '';
  if (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08')) return true;
  if (e.severity === 'FATAL' || e.severity === 'PANIC') return true;
  if (typeof e.message === 'string' && PG_MESSAGES.some((m) => (e.message as string).startsWith(m))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => unavailable(inner, depth + 1))) return true;
  return unavailable(e.driverError, depth + 1) || unavailable(e.cause, depth + 1);
}
