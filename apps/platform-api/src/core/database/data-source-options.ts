import type { DataSourceOptions } from 'typeorm';
import { PLATFORM_MIGRATIONS } from '../../database/migrations/index.js';
import { PLATFORM_ENTITIES } from './entities.js';

/** One definition of the connection, used by the app module and the `migrate` command. */
export function platformDataSourceOptions(databaseUrl: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: PLATFORM_ENTITIES,
    migrations: PLATFORM_MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    extra: { max: 20, idleTimeoutMillis: 30_000 },
  };
}
