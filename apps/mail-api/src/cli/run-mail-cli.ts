import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { DomainError, ensureDatabaseExists } from '@app/service-kit';
import type { MailConfig } from '../config/mail-config.js';
import { mailDataSourceOptions } from '../core/database/data-source-options.js';
import { ProjectsService } from '../modules/projects/projects.service.js';

export const MAIL_CLI_USAGE = [
  'usage: npm run mail -- <command>',
  '  project:create NAME       create a project and print {id, name, secretKey, publicKey} as JSON',
  '  project:rotate-keys ID    give a project new keys (the old ones stop working) and print the same',
].join('\n');

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

type Command = { kind: 'project:create'; name: string } | { kind: 'project:rotate-keys'; id: string };

function parse(argv: string[]): Command | null {
  const [command, arg, ...rest] = argv;
  if (rest.length > 0 || !arg?.trim()) return null;
  if (command === 'project:create') return { kind: command, name: arg };
  if (command === 'project:rotate-keys') return { kind: command, id: arg.trim() };
  return null;
}

function execute(projects: ProjectsService, command: Command): Promise<MailProjectCredentials> {
  return command.kind === 'project:create' ? projects.create(command.name) : projects.rotateKeys(command.id);
}

/**
 * The project commands, callable in-process (tests) and from the thin `mail-cli.ts` entry. Prints one
 * JSON line on success; returns the exit code. Uses a plain DataSource: no Nest app, no Redis.
 * It does not migrate: deployments run `migrate` first, and a missing table says so.
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
  await ensureDatabaseExists(config.databaseUrl);
  const dataSource = new DataSource({ ...mailDataSourceOptions(config.databaseUrl), extra: { max: 1 } });
  await dataSource.initialize();
  try {
    out(JSON.stringify(await execute(new ProjectsService(dataSource), command)));
    return EXIT_OK;
  } catch (error) {
    if (error instanceof DomainError) {
      err(`mail-cli: ${error.message}${command.kind === 'project:rotate-keys' ? ` (id ${command.id})` : ''}`);
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
