import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { DomainError, ensureDatabaseExists } from '@app/service-kit';
import type { MailConfig } from '../config/mail-config.js';
import { mailDataSourceOptions } from '../core/database/data-source-options.js';
import { readRate, sendingRateKeys } from '../modules/delivery/sending-rate.js';
import { ProjectsService } from '../modules/projects/projects.service.js';

export const MAIL_CLI_USAGE = [
  'usage: npm run mail -- <command>',
  '  project:create NAME             create a project and print {id, name, secretKey, publicKey} as JSON',
  '  project:rotate-keys ID          give a project new keys (the old ones stop working) and print the same',
  "  project:set-rate ID <n|none>    cap a project's sending at n emails per second (none: its fair share only)",
  "  rate:set <n>                    the deployment's sending rate in emails per second (every worker within 2 s)",
  "  rate:get                        print the deployment's sending rate",
].join('\n');

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** The highest rate the commands accept (a typo of a few digits more is refused, not applied). */
const MAX_RATE = 100_000;

type Command =
  | { kind: 'project:create'; name: string }
  | { kind: 'project:rotate-keys'; id: string }
  | { kind: 'project:set-rate'; id: string; rate: number | null }
  | { kind: 'rate:set'; rate: number }
  | { kind: 'rate:get' };

function rateOf(value: string | undefined): number | null {
  if (!value || !/^[1-9][0-9]{0,5}$/.test(value)) return null;
  const rate = Number(value);
  return rate <= MAX_RATE ? rate : null;
}

function parse(argv: string[]): Command | null {
  const [command, ...args] = argv;
  if (command === 'rate:get') return args.length === 0 ? { kind: command } : null;
  if (command === 'rate:set') {
    const rate = args.length === 1 ? rateOf(args[0]) : null;
    return rate === null ? null : { kind: command, rate };
  }
  if (command === 'project:set-rate') {
    const [id, value] = args;
    if (args.length !== 2 || !id.trim()) return null;
    const rate = value === 'none' ? null : rateOf(value);
    return value === 'none' || rate !== null ? { kind: command, id: id.trim(), rate } : null;
  }
  const [arg, ...rest] = args;
  if (rest.length > 0 || !arg?.trim()) return null;
  if (command === 'project:create') return { kind: command, name: arg };
  if (command === 'project:rotate-keys') return { kind: command, id: arg.trim() };
  return null;
}

/** The rate commands: the key workers read (SendingRate); no database. */
async function runRate(command: Extract<Command, { kind: 'rate:set' | 'rate:get' }>, config: MailConfig): Promise<object> {
  const redis = new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const key = sendingRateKeys(config.queuePrefix).rate;
    if (command.kind === 'rate:set') {
      await redis.set(key, String(command.rate));
      return { ratePerSecond: command.rate };
    }
    const stored = await redis.get(key);
    return { ratePerSecond: await readRate(redis, key, config.ratePerSecond), source: stored ? 'rate:set' : 'MAIL_RATE_PER_SECOND' };
  } finally {
    redis.disconnect();
  }
}

function execute(projects: ProjectsService, command: Exclude<Command, { kind: 'rate:set' | 'rate:get' }>): Promise<object> {
  if (command.kind === 'project:create') return projects.create(command.name);
  if (command.kind === 'project:set-rate') return projects.setMaxSendRate(command.id, command.rate);
  return projects.rotateKeys(command.id);
}

/**
 * The mail CLI, callable in-process (tests) and from the thin `mail-cli.ts` entry. Prints one JSON
 * line on success; returns the exit code. Project commands use a plain DataSource (no Nest app, no
 * Redis); the rate commands only Redis. It does not migrate: deployments run `migrate` first, and a
 * missing table says so.
 */
export async function runMailCli(
  argv: string[],
  config: MailConfig,
  out: (line: string) => void,
  err: (line: string) => void = (line) => console.error(line),
): Promise<number> {
  const command = parse(argv);
  if (!command) {
    err(MAIL_CLI_USAGE);
    return EXIT_USAGE;
  }
  if (command.kind === 'rate:set' || command.kind === 'rate:get') {
    out(JSON.stringify(await runRate(command, config)));
    return EXIT_OK;
  }
  await ensureDatabaseExists(config.databaseUrl);
  const dataSource = new DataSource({ ...mailDataSourceOptions(config.databaseUrl), extra: { max: 1 } });
  await dataSource.initialize();
  try {
    out(JSON.stringify(await execute(new ProjectsService(dataSource), command)));
    return EXIT_OK;
  } catch (error) {
    if (error instanceof DomainError) {
      err(`mail-cli: ${error.message}${'id' in command ? ` (id ${command.id})` : ''}`);
      return EXIT_FAILED;
    }
    if ((error as { code?: string }).code === '42P01') {
      err('mail-cli: the database has no projects table yet; run `npm run migrate -w mail-api` first');
      return EXIT_FAILED;
    }
    throw error;
  } finally {
    await dataSource.destroy();
  }
}
