import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { listen, migrateDatabase } from '@app/service-kit';
import { createTestDatabase, uniqueQueuePrefix, type TestDatabase } from '@app/service-kit/testing';
import { loadPlatformConfig, type PlatformConfig } from '../../src/config/platform-config.js';
import { platformDataSourceOptions } from '../../src/core/database/data-source-options.js';
import { createPlatformHttpApp } from '../../src/http-setup.js';

export interface PlatformTestEnv {
  config: PlatformConfig;
  db: TestDatabase;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** A fresh database (migrated), a private queue prefix and data dir: everything one test file owns. */
export async function createPlatformTestEnv(env: NodeJS.ProcessEnv = {}): Promise<PlatformTestEnv> {
  const db = await createTestDatabase('platform');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-test-'));
  const config = loadPlatformConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PLATFORM_DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: uniqueQueuePrefix('platform'),
    DATA_DIR: dataDir,
    AUTH_JWT_SECRET: 'test-jwt-secret',
    CONSENT_INTEGRITY_SECRET: 'test-consent-secret',
    ...env,
  });
  await migrateDatabase({ ...platformDataSourceOptions(db.url), url: db.url });
  return {
    config,
    db,
    dataDir,
    cleanup: async () => {
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface PlatformTestApp extends PlatformTestEnv {
  app: NestExpressApplication;
  /** Base URL of the app listening on a random port. */
  url: string;
  close(): Promise<void>;
}

/** Boots the real HTTP app (same factory as main.ts) on a random port over real Postgres and Redis. */
export async function startPlatformApp(
  options: { env?: NodeJS.ProcessEnv; extraModules?: Type[] } = {},
): Promise<PlatformTestApp> {
  const testEnv = await createPlatformTestEnv(options.env);
  const app = await createPlatformHttpApp(testEnv.config, { extraModules: options.extraModules });
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
