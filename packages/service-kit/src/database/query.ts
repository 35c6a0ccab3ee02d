import type { Pool, PoolClient, QueryResult } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { preparedStatement } from './prepared-query.js';

/**
 * Where a statement runs: the app's `DataSource` (a pooled connection per statement) or the
 * `EntityManager` of a transaction (`dataSource.transaction(async (tx) => ...)`: its connection).
 * Repositories take it as their first argument so a service can run several of them in one transaction.
 */
export type Db = DataSource | EntityManager;

function connectionOf(db: Db): Pool | PoolClient {
  const manager: EntityManager = 'createQueryRunner' in db ? db.manager : db;
  const client = (manager.queryRunner as unknown as { databaseConnection?: PoolClient } | undefined)?.databaseConnection;
  if (client) return client;
  return (manager.connection.driver as unknown as { master: Pool }).master;
}

/**
 * Runs one statement and returns its rows typed as `Row` (for INSERT/UPDATE/DELETE: the RETURNING
 * rows, else `[]`). Unlike `DataSource.query`, the result never depends on the command (TypeORM
 * answers `[rows, count]` for UPDATE and DELETE). Parameters are always bound, never interpolated.
 */
export async function query<Row = Record<string, unknown>>(db: Db, sql: string, params: readonly unknown[] = []): Promise<Row[]> {
  const result: QueryResult = await connectionOf(db).query(sql, params as unknown[]);
  return result.rows as Row[];
}

/** The first row of `query`, or null. */
export async function queryOne<Row = Record<string, unknown>>(db: Db, sql: string, params: readonly unknown[] = []): Promise<Row | null> {
  return (await query<Row>(db, sql, params))[0] ?? null;
}

/** Runs one statement and returns how many rows it affected (UPDATE, DELETE, INSERT without RETURNING). */
export async function execute(db: Db, sql: string, params: readonly unknown[] = []): Promise<number> {
  const result: QueryResult = await connectionOf(db).query(sql, params as unknown[]);
  return result.rowCount ?? 0;
}

/**
 * `query` as a named prepared statement: each connection parses and plans the text once. For hot
 * paths whose text comes from a bounded set of fixed pieces (never a variable-length VALUES list or
 * an IN list built per call: every distinct text stays prepared on every connection).
 */
export async function queryPrepared<Row = Record<string, unknown>>(db: Db, sql: string, params: readonly unknown[] = []): Promise<Row[]> {
  const result: QueryResult = await connectionOf(db).query(preparedStatement(sql, params as unknown[]));
  return result.rows as Row[];
}
