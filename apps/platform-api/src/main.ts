import '@app/service-kit/require-supported-node';
import 'reflect-metadata';
import { AppLogger, ConfigError, ensureDatabaseExists, listen } from '@app/service-kit';
import { loadPlatformConfig } from './config/platform-config.js';
import { createPlatformHttpApp } from './http-setup.js';

async function main(): Promise<void> {
  const config = loadPlatformConfig();
  await ensureDatabaseExists(config.databaseUrl);
  const app = await createPlatformHttpApp(config);
  const url = await listen(app, config.port);
  app.get(AppLogger).log(`platform-api listening on ${url} (docs: ${url}/docs)`);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
