import { Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { preparedStatement } from '@app/service-kit';

/**
 * Runs single statements on the app's Postgres pool (the one TypeORM opened) as named prepared
 * statements (`preparedStatement`): on the hot paths (track, contact pages) the planning of a CTE
 * costs more than running it. Returns the rows, whatever the command. Inside a transaction, use
 * `preparedQuery(tx, ...)` from service-kit.
 */
@Injectable()
export class Sql {
  constructor(private readonly dataSource: DataSource) {}

  async query<T>(text: string, values: unknown[] = []): Promise<T[]> {
    const result = await this.pool().query(preparedStatement(text, values));
    return result.rows as T[];
  }

  private pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }
}
