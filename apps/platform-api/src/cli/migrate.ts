import '@app/service-kit/require-supported-node';
import { ConfigError, migrateDatabase, redactUrl } from '@app/service-kit';
import { loadPlatformConfig } from '../config/platform-config.js';
import { platformDataSourceOptions } from '../core/database/data-source-options.js';

/** `npm run migrate -w platform-api`: creates the database if missing and applies pending migrations. */
async function main(): Promise<void> {
  const config = loadPlatformConfig();
  const applied = await migrateDatabase({ ...platformDataSourceOptions(config.databaseUrl), url: config.databaseUrl });
  console.log(JSON.stringify({ service: 'platform-api', database: redactUrl(config.databaseUrl), applied }));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
