import '@app/service-kit/require-supported-node';
import 'reflect-metadata';
import { ConfigError } from '@app/service-kit';
import { loadMailConfig } from '../config/mail-config.js';
import { runMailCli } from './run-mail-cli.js';

/** `npm run mail -- project:create NAME`, `project:rotate-keys ID`, `project:set-rate ID <n|none>`, `rate:set <n>`, `rate:get` (see run-mail-cli.ts). */
async function main(): Promise<void> {
  const config = loadMailConfig();
  process.exitCode = await runMailCli(process.argv.slice(2), config, (line) => process.stdout.write(`${line}\n`));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
