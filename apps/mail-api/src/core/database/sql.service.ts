import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * Runs single statements on the app's Postgres pool (the one TypeORM opened) as named prepared
 * statements: each connection parses and plans a statement once instead of on every request. On the
 * hot paths (track, contact pages) the planning of a CTE costs more than running it. The name is a
 * hash of the text, so every distinct text (a bounded set: the repositories build them from fixed
 * pieces) is prepared once per connection. Returns the rows, whatever the command.
 */
@Injectable()
export class Sql {
  private readonly names = new Map<string, string>();

  constructor(private readonly dataSource: DataSource) {}

  async query<T>(text: string, values: unknown[] = []): Promise<T[]> {
    const result = await this.pool().query({ name: this.nameOf(text), text, values });
    return result.rows as T[];
  }

  /** The same, on the connection of a transaction (`dataSource.transaction(tx => ...)`). */
  async queryIn<T>(tx: EntityManager, text: string, values: unknown[] = []): Promise<T[]> {
    const client = (tx.queryRunner as unknown as { databaseConnection?: PoolClient } | undefined)?.databaseConnection;
    if (!client) return tx.query(text, values);
    const result = await client.query({ name: this.nameOf(text), text, values });
    return result.rows as T[];
  }

  private pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }

  private nameOf(text: string): string {
    let name = this.names.get(text);
    if (!name) {
      name = `mail_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      this.names.set(text, name);
    }
    return name;
  }
}
