import type { Type } from '@nestjs/common';
import { createAppTestEnv, startAppUnderTest, type AppTestEnv, type AppUnderTest, type RunningTestApp } from '@app/service-kit/testing';
import { loadMailConfig, type MailConfig } from '../../src/config/mail-config.js';
import { mailDataSourceOptions } from '../../src/core/database/data-source-options.js';
import { createMailHttpApp } from '../../src/http-setup.js';

const MAIL_API: AppUnderTest<MailConfig> = {
  name: 'mail',
  databaseUrlVar: 'MAIL_DATABASE_URL',
  loadConfig: loadMailConfig,
  dataSourceOptions: mailDataSourceOptions,
  createHttpApp: createMailHttpApp,
};

export type MailTestEnv = AppTestEnv<MailConfig>;
export type MailTestApp = RunningTestApp<MailConfig>;

/** A fresh database (migrated), a private queue prefix and data dir: everything one test file owns. */
export function createMailTestEnv(env: NodeJS.ProcessEnv = {}): Promise<MailTestEnv> {
  return createAppTestEnv(MAIL_API, env);
}

/** Boots the real HTTP app (same factory as main.ts) on a random port over real Postgres and Redis. */
export function startMailApp(options: { env?: NodeJS.ProcessEnv; extraModules?: Type[] } = {}): Promise<MailTestApp> {
  return startAppUnderTest(MAIL_API, options);
}
