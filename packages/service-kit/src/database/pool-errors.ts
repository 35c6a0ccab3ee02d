import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';

/**
 * pg's pool listens for errors on idle clients only. A client that is checked out (held by a
 * transaction, or between two statements) and loses its server (Postgres restarted: FATAL 57P01)
 * emits 'error' with no listener, and Node ends the process. The statement in flight still fails
 * and its request answers 500; this listener only keeps the process alive so the next request gets
 * a fresh connection once Postgres is back.
 */
@Injectable()
export class PoolClientErrorListener implements OnModuleInit {
  private readonly logger = new Logger('Database');

  constructor(private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    if (!pool) return;
    const listen = (client: PoolClient) => {
      client.on('error', (err: Error & { code?: string }) => {
        this.logger.warn({ err: err.message, code: err.code }, 'database connection lost; the pool replaces it');
      });
    };
    pool.on('connect', listen);
    for (const client of (pool as unknown as { _clients?: PoolClient[] })._clients ?? []) listen(client);
  }
}
