import { DataSource, type DataSourceOptions } from 'typeorm';
import { ensureDatabaseExists } from './provision.js';

// Any constant works; it only has to be the same for every process migrating this database.
const MIGRATION_LOCK_KEY = 727_001;

/**
 * Creates the database if missing and applies pending migrations under a Postgres advisory lock, so
 * several instances (or an API and a migrate Job) starting together never apply one migration twice.
 */
export async function migrateDatabase(options: DataSourceOptions & { url: string }): Promise<string[]> {
  await ensureDatabaseExists(options.url);
  const dataSource = new DataSource({ ...options, migrationsRun: false, synchronize: false });
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
    await dataSource.destroy();
  }
}
