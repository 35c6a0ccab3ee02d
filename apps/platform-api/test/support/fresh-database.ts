import { DataSource } from 'typeorm';
import { platformDataSourceOptions } from '../../src/core/database/data-source-options.js';
import { createPlatformTestEnv } from './platform-test-app.js';

/**
 * A fresh, migrated and never-analysed platform database with a TypeORM connection (for repository
 * specs that need no app): the planner has no statistics, as on a new deployment.
 */
export async function freshPlatformDatabase(): Promise<{ db: DataSource; close: () => Promise<void> }> {
  const env = await createPlatformTestEnv();
  const db = await new DataSource(platformDataSourceOptions(env.db.url)).initialize();
  return {
    db,
    close: async () => {
      await db.destroy();
      await env.cleanup();
    },
  };
}
