import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { unsupportedNodeMessage } from '@app/service-kit';

const run = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

// Every entry point an operator starts with `node <file>` (docs/deploying.md "Running parts alone").
const ENTRY_POINTS = [
  'apps/platform-api/dist/main.js',
  'apps/platform-api/dist/worker.js',
  'apps/platform-api/dist/cli/migrate.js',
  'apps/mail-api/dist/main.js',
  'apps/mail-api/dist/worker.js',
  'apps/mail-api/dist/cli/migrate.js',
  'apps/mail-api/dist/cli/mail-cli.js',
];

describe('unsupportedNodeMessage (engines: Node >= 24.11)', () => {
  it.each(['20.20.2', '22.12.0', '24.10.0', '18.0.0'])('refuses Node %s, naming it and the way to run the project Node', (version) => {
    const message = unsupportedNodeMessage(version);
    expect(message).toContain(`Node ${version} cannot run this service`);
    expect(message).toContain('npm start -w platform-api');
  });

  it.each(['24.11.0', '24.21.0', '25.0.0', '26.3.1'])('accepts Node %s', (version) => {
    expect(unsupportedNodeMessage(version)).toBeUndefined();
  });

  it("draws the line where the root package.json's engines does", () => {
    const engines = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const [, major, minor] = /^>=(\d+)\.(\d+)/.exec(engines) ?? [];
    expect(unsupportedNodeMessage(`${major}.${minor}.0`)).toBeUndefined();
    expect(unsupportedNodeMessage(`${major}.${Number(minor) - 1}.99`)).toContain('cannot run this service');
  });
});

// On Node 20 the platform's argon2 binding ends the process with SIGSEGV while loading, with no output:
// each entry point must say why and exit 1 before any other module is evaluated. The child runs this
// machine's Node 24, told by a preload that it is Node 20.20.2.
describe('entry points on an unsupported Node', () => {
  const pretendNode20 = `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.20.2'})`;

  it.each(ENTRY_POINTS)('%s exits 1 with the reason before starting anything', async (entry) => {
    const failure = await run(process.execPath, ['--import', pretendNode20, entry], {
      cwd: REPO,
      env: { ...process.env, PLATFORM_PORT: '0', MAIL_PORT: '0', LOG_LEVEL: 'info' },
      timeout: 20_000,
    }).then(
      () => undefined,
      (err: unknown) => err as { code: number | null; stdout: string; stderr: string },
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('Node 20.20.2 cannot run this service: it needs Node >= 24.11');
    expect(failure?.stdout).toBe('');
  });
});
