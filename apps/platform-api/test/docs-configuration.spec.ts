import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Expose } from 'class-transformer';
import { describeConfig, EnvVar } from '@app/service-kit';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PAGE = path.join(REPO, 'docs/configuration.md');

/** `node scripts/docs-config.mjs --check --file <page>`: its exit code and what it printed. */
function checkPage(page: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/docs-config.mjs', '--check', '--file', page], { cwd: REPO }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}`.trim() });
    });
  });
}

/**
 * docs/configuration.md is generated from the apps' config schemas (`@EnvVar` declarations in
 * apps/*\/src/config/): the committed page must be what the generator writes from the code as it is.
 */
describe('the configuration reference (docs/configuration.md)', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'docs-config-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('is what `npm run docs:config` writes from the config schemas now', async () => {
    const { code, output } = await checkPage(PAGE);
    if (code !== 0) throw new Error(`docs/configuration.md is stale: run \`npm run docs:config\` and commit it.\n${output}`);
    expect(output).toBe('docs-config: docs/configuration.md is up to date');
  }, 60_000);

  it('documents every variable of both apps, and the check fails on a page that differs by one meaning', async () => {
    const page = readFileSync(PAGE, 'utf8');
    for (const variable of ['PLATFORM_PORT', 'AUTH_JWT_SECRET', 'MAIL_SMTP_URL', 'MAIL_SECRETS_KEY', 'TRUST_PROXY']) {
      expect(page).toMatch(new RegExp(`^\\| \`${variable}\` +\\|`, 'm'));
    }
    const stale = path.join(tmp, 'configuration.md');
    writeFileSync(stale, page.replace('HMAC key of consent records', 'HMAC key of consents'));
    const { code, output } = await checkPage(stale);
    expect({ code, output }).toEqual({ code: 1, output: expect.stringContaining('is stale') });
    expect(output).toContain('run `npm run docs:config`');
  }, 60_000);

  it('refuses a schema variable declared without a meaning', () => {
    class Described {
      @EnvVar('HTTP port') PORT = 3000;
      @EnvVar('a secret', { default: 'random' }) SECRET?: string;
      @EnvVar('optional') OPTIONAL?: string;
    }
    expect(describeConfig(Described)).toEqual([
      { name: 'PORT', default: '`3000`', meaning: 'HTTP port' },
      { name: 'SECRET', default: 'random', meaning: 'a secret' },
      { name: 'OPTIONAL', default: 'unset', meaning: 'optional' },
    ]);
    class Undescribed {
      @EnvVar('HTTP port') PORT = 3000;
      @Expose() HIDDEN?: string;
    }
    expect(() => describeConfig(Undescribed)).toThrow("Undescribed: declare HIDDEN with @EnvVar('meaning'), not a bare @Expose()");
  });
});
