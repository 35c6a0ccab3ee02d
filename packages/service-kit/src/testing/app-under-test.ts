import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DataSourceOptions } from 'typeorm';
import { migrateDatabase } from '../database/migrate.js';
import { listen } from '../http/http-app.js';
import { createTestDatabase, deleteQueueKeys, uniqueQueuePrefix, type TestDatabase } from './test-database.js';

/** How an app is configured and built: what each app's test support hands to the helpers below. */
export interface AppUnderTest<TConfig> {
  /** Names its test databases, queue prefixes and data dirs (`mail`, `platform`). */
  name: string;
  /** The env var of its database URL (`MAIL_DATABASE_URL`). */
  databaseUrlVar: string;
  loadConfig(env: NodeJS.ProcessEnv): TConfig;
  dataSourceOptions(url: string): DataSourceOptions;
  createHttpApp(config: TConfig, options: { extraModules?: Type[] }): Promise<NestExpressApplication>;
  /** Test settings of its own (e.g. fixed secrets), under the caller's `env`. */
  env?: NodeJS.ProcessEnv;
}

export interface AppTestEnv<TConfig> {
  config: TConfig;
  db: TestDatabase;
  dataDir: string;
  cleanup(): Promise<void>;
}

export interface RunningTestApp<TConfig> extends AppTestEnv<TConfig> {
  app: NestExpressApplication;
  /** Base URL of the app listening on a random port. */
  url: string;
  close(): Promise<void>;
}

/**
 * A fresh database (migrated), a private queue prefix and data dir: everything one test file owns, and
 * `cleanup` removes all three (a QUEUE_PREFIX the caller chose in `env` is the caller's: its keys stay).
 */
export async function createAppTestEnv<TConfig>(target: AppUnderTest<TConfig>, env: NodeJS.ProcessEnv = {}): Promise<AppTestEnv<TConfig>> {
  const db = await createTestDatabase(target.name);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `${target.name}-test-`));
  const queuePrefix = uniqueQueuePrefix(target.name);
  const config = target.loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    [target.databaseUrlVar]: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: queuePrefix,
    DATA_DIR: dataDir,
    // The specs' HTTP client stands in for a reverse proxy on loopback, so a spec can pose as different
    // clients with X-Forwarded-For (hardening specs check the production default of trusting nobody).
    TRUST_PROXY: '127.0.0.1,::1',
    ...target.env,
    ...env,
  });
  await migrateDatabase({ ...target.dataSourceOptions(db.url), url: db.url });
  return {
    config,
    db,
    dataDir,
    cleanup: async () => {
      await db.drop();
      await deleteQueueKeys(queuePrefix);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Boots the real HTTP app (the factory main.ts uses) on a random port over real Postgres and Redis. */
export async function startAppUnderTest<TConfig>(
  target: AppUnderTest<TConfig>,
  options: { env?: NodeJS.ProcessEnv; extraModules?: Type[] } = {},
): Promise<RunningTestApp<TConfig>> {
  const testEnv = await createAppTestEnv(target, options.env);
  const app = await target.createHttpApp(testEnv.config, { extraModules: options.extraModules });
  const url = await listen(app, 0, '127.0.0.1');
  return {
    ...testEnv,
    app,
    url,
    close: async () => {
      await app.close();
      await testEnv.cleanup();
    },
  };
}
