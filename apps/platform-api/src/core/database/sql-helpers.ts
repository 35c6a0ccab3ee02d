const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * A Postgres unique violation (TypeORM wraps the driver error); with `constraint`, only on that
 * constraint or unique index.
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  return isViolation(err, UNIQUE_VIOLATION, constraint);
}

/** A Postgres foreign key violation; with `constraint`, only on that constraint. */
export function isForeignKeyViolation(err: unknown, constraint?: string): boolean {
  return isViolation(err, FOREIGN_KEY_VIOLATION, constraint);
}

function isViolation(err: unknown, sqlState: string, constraint: string | undefined): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e?.driverError?.code ?? e?.code;
  const name = e?.driverError?.constraint ?? e?.constraint;
  return code === sqlState && (constraint === undefined || name === constraint);
}
