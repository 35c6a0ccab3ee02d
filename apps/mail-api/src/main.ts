import '@app/service-kit/require-supported-node';
import 'reflect-metadata';
import { AppLogger, ConfigError, ensureDatabaseExists, listen } from '@app/service-kit';
import { loadMailConfig } from './config/mail-config.js';
import { createMailHttpApp } from './http-setup.js';

async function main(): Promise<void> {
  const config = loadMailConfig();
  await ensureDatabaseExists(config.databaseUrl);
  const app = await createMailHttpApp(config);
  const url = await listen(app, config.port);
  app.get(AppLogger).log(`mail-api listening on ${url} (docs: ${url}/docs)`);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
