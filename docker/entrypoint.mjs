// The image's entry point, run by tini: `node /app/docker/entrypoint.mjs <command> [args]` with the
// command `api` (default), `worker`, `migrate`, or `cli ...` (mail). The image has no shell: this script
// imports the app's entry module into its own process, so node stays the one process tini signals and
// SIGTERM reaches the app's graceful shutdown. The entry module sees its own path and the remaining
// arguments in process.argv, as if node had been started on it.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ENTRIES = { api: 'dist/main.js', worker: 'dist/worker.js', migrate: 'dist/cli/migrate.js', cli: 'dist/cli/mail-cli.js' };
const EX_USAGE = 64;

function refuse(message) {
  console.error(`entrypoint: ${message}`);
  process.exit(EX_USAGE);
}

const app = process.env.APP;
if (!app) refuse('APP is not set (the image sets it)');
const [command = 'api', ...args] = process.argv.slice(2);
if (!Object.hasOwn(ENTRIES, command)) refuse(`unknown command '${command}' (api, worker, migrate or cli)`);
const entry = path.resolve('apps', app, ENTRIES[command]);
if (command === 'cli' && !existsSync(entry)) refuse(`${app} has no CLI`);
process.argv = [process.argv[0], entry, ...args];
await import(pathToFileURL(entry).href);
