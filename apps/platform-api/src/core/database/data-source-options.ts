import type { DataSourceOptions } from 'typeorm';
import { PLATFORM_MIGRATIONS } from '../../database/migrations/index.js';

/**
 * One definition of the connection, used by the app module and the `migrate` command. No entities:
 * every statement is SQL in a repository (typed through service-kit's `query`), none goes through
 * TypeORM's entity layer.
 */
export function platformDataSourceOptions(databaseUrl: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: [],
    migrations: PLATFORM_MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    extra: { max: 20, idleTimeoutMillis: 30_000 },
  };
}
