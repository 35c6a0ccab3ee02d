const UNIQUE_VIOLATION = '23505';

/**
 * A Postgres unique violation (TypeORM wraps the driver error); with `constraint`, only on that
 * constraint or unique index.
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e?.driverError?.code ?? e?.code;
  const name = e?.driverError?.constraint ?? e?.constraint;
  return code === UNIQUE_VIOLATION && (constraint === undefined || name === constraint);
}
