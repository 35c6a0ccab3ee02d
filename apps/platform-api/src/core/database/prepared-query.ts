import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { EntityManager } from 'typeorm';

const names = new Map<string, string>();

function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `p_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * Runs a statement of fixed text as a named prepared statement on the transaction's connection: each
 * connection parses and plans it once instead of on every call. For hot statements whose planning
 * costs more than their execution (the command bus's snapshots and log INSERT); TypeORM's own `query`
 * sends unnamed statements, planned every time. The text must come from a bounded set (never built
 * from input values).
 */
export async function preparedQuery<T = Record<string, unknown>>(tx: EntityManager, text: string, values: unknown[]): Promise<T[]> {
  const client = (tx.queryRunner as unknown as { databaseConnection?: PoolClient } | undefined)?.databaseConnection;
  if (!client) return tx.query(text, values);
  const result = await client.query({ name: statementName(text), text, values });
  return result.rows as T[];
}
