import '@app/service-kit/require-supported-node';
import { ConfigError, migrateDatabase, redactUrl } from '@app/service-kit';
import { loadMailConfig } from '../config/mail-config.js';
import { mailDataSourceOptions } from '../core/database/data-source-options.js';

/** `npm run migrate -w mail-api`: creates the database if missing and applies pending migrations. */
async function main(): Promise<void> {
  const config = loadMailConfig();
  const applied = await migrateDatabase({ ...mailDataSourceOptions(config.databaseUrl), url: config.databaseUrl });
  console.log(JSON.stringify({ service: 'mail-api', database: redactUrl(config.databaseUrl), applied }));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
