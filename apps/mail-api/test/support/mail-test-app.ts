import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { listen, migrateDatabase } from '@app/service-kit';
import { createTestDatabase, uniqueQueuePrefix, type TestDatabase } from '@app/service-kit/testing';
import { loadMailConfig, type MailConfig } from '../../src/config/mail-config.js';
import { mailDataSourceOptions } from '../../src/core/database/data-source-options.js';
import { createMailHttpApp } from '../../src/http-setup.js';

export interface MailTestEnv {
  config: MailConfig;
  db: TestDatabase;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** A fresh database (migrated), a private queue prefix and data dir: everything one test file owns. */
export async function createMailTestEnv(env: NodeJS.ProcessEnv = {}): Promise<MailTestEnv> {
  const db = await createTestDatabase('mail');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mail-test-'));
  const config = loadMailConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MAIL_DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: uniqueQueuePrefix('mail'),
    DATA_DIR: dataDir,
    ...env,
  });
  await migrateDatabase({ ...mailDataSourceOptions(db.url), url: db.url });
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

export interface MailTestApp extends MailTestEnv {
  app: NestExpressApplication;
  /** Base URL of the app listening on a random port. */
  url: string;
  close(): Promise<void>;
}

/** Boots the real HTTP app (same factory as main.ts) on a random port over real Postgres and Redis. */
export async function startMailApp(options: { env?: NodeJS.ProcessEnv; extraModules?: Type[] } = {}): Promise<MailTestApp> {
  const testEnv = await createMailTestEnv(options.env);
  const app = await createMailHttpApp(testEnv.config, { extraModules: options.extraModules });
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
