import type { DataSourceOptions } from 'typeorm';
import { MAIL_MIGRATIONS } from '../../database/migrations/index.js';
import { MAIL_ENTITIES } from './entities.js';

/** One definition of the connection, used by the app module, the `migrate` command and the CLI. */
export function mailDataSourceOptions(databaseUrl: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: MAIL_ENTITIES,
    migrations: MAIL_MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    extra: { max: 20, idleTimeoutMillis: 30_000 },
  };
}
