import { createHash } from 'node:crypto';
import type { PoolClient, QueryConfig } from 'pg';
import type { EntityManager } from 'typeorm';

const names = new Map<string, string>();

/**
 * A named prepared statement for `text`: each connection parses and plans a statement once instead
 * of on every call (TypeORM's own `query` sends unnamed statements, planned every time). The name is
 * a hash of the text, so the texts must come from a bounded set: built from fixed pieces, never from
 * input values.
 */
export function preparedStatement(text: string, values: unknown[]): QueryConfig {
  let name = names.get(text);
  if (!name) {
    name = `p_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return { name, text, values };
}

/** Runs `text` as a named prepared statement on the connection of a TypeORM transaction; returns the rows. */
export async function preparedQuery<T = Record<string, unknown>>(tx: EntityManager, text: string, values: unknown[] = []): Promise<T[]> {
  const client = (tx.queryRunner as unknown as { databaseConnection?: PoolClient } | undefined)?.databaseConnection;
  if (!client) return tx.query(text, values);
  const result = await client.query(preparedStatement(text, values));
  return result.rows as T[];
}
