import type { Type } from '@nestjs/common';
import { createAppTestEnv, startAppUnderTest, type AppTestEnv, type AppUnderTest, type RunningTestApp } from '@app/service-kit/testing';
import { loadPlatformConfig, type PlatformConfig } from '../../src/config/platform-config.js';
import { platformDataSourceOptions } from '../../src/core/database/data-source-options.js';
import { createPlatformHttpApp } from '../../src/http-setup.js';

const PLATFORM_API: AppUnderTest<PlatformConfig> = {
  name: 'platform',
  databaseUrlVar: 'PLATFORM_DATABASE_URL',
  loadConfig: loadPlatformConfig,
  dataSourceOptions: platformDataSourceOptions,
  createHttpApp: createPlatformHttpApp,
  env: { AUTH_JWT_SECRET: 'test-jwt-secret', CONSENT_INTEGRITY_SECRET: 'test-consent-secret' },
};

export type PlatformTestEnv = AppTestEnv<PlatformConfig>;
export type PlatformTestApp = RunningTestApp<PlatformConfig>;

/** A fresh database (migrated), a private queue prefix and data dir: everything one test file owns. */
export function createPlatformTestEnv(env: NodeJS.ProcessEnv = {}): Promise<PlatformTestEnv> {
  return createAppTestEnv(PLATFORM_API, env);
}

/** Boots the real HTTP app (same factory as main.ts) on a random port over real Postgres and Redis. */
export function startPlatformApp(options: { env?: NodeJS.ProcessEnv; extraModules?: Type[] } = {}): Promise<PlatformTestApp> {
  return startAppUnderTest(PLATFORM_API, options);
}
