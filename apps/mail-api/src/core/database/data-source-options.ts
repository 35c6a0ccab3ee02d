import type { DataSourceOptions } from 'typeorm';
import { MAIL_MIGRATIONS } from '../../database/migrations/index.js';

/**
 * One definition of the connection, used by the app module, the `migrate` command and the CLI. No
 * entities: every statement is SQL in a `*.repository.ts` (the migrations define the tables).
 */
export function mailDataSourceOptions(databaseUrl: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: [],
    migrations: MAIL_MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    extra: { max: 20, idleTimeoutMillis: 30_000 },
  };
}
