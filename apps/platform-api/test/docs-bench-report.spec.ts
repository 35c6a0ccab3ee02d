import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PAGES = ['docs/benchmarks.md', 'bench/README.md'];

/** `node scripts/bench-report.mjs --check --root <root>`: its exit code and what it printed. */
function check(root: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/bench-report.mjs', '--check', '--root', root], { cwd: REPO }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}`.trim() });
    });
  });
}

/** A copy of the pages and result files under a temporary root, for the check to fail on. */
function copyOfRepo(into: string): string {
  for (const page of PAGES) {
    mkdirSync(path.dirname(path.join(into, page)), { recursive: true });
    cpSync(path.join(REPO, page), path.join(into, page));
  }
  cpSync(path.join(REPO, 'bench/results'), path.join(into, 'bench/results'), { recursive: true });
  return into;
}

/**
 * The figure tables of docs/benchmarks.md and bench/README.md are generated from the committed
 * bench/results/*.json (`npm run bench:report`): the committed pages must be what the generator writes
 * now, so a result committed without regenerating, or a figure edited by hand, fails here.
 */
describe('bench figures in the docs (npm run bench:report)', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-report-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('the committed pages are what the generator writes from bench/results now', async () => {
    const { code, output } = await check(REPO);
    if (code !== 0) throw new Error(`bench figures are stale: run \`npm run bench:report\` and commit the pages.\n${output}`);
    expect(output).toBe('bench-report: docs/benchmarks.md and bench/README.md are up to date');
  }, 30_000);

  it('fails on a figure edited by hand, and on a result file committed without regenerating', async () => {
    const edited = copyOfRepo(path.join(tmp, 'edited'));
    const readme = path.join(edited, 'bench/README.md');
    const page = readFileSync(readme, 'utf8');
    const figure = /\| (\d+\.\d+) \|/.exec(page.slice(page.indexOf('<!-- bench:report:start -->')));
    expect(figure).not.toBeNull();
    writeFileSync(readme, page.replace(figure![0], `| ${Number(figure![1]) + 0.5} |`));
    expect(await check(edited)).toEqual({ code: 1, output: expect.stringContaining('bench/README.md (line') });

    const added = copyOfRepo(path.join(tmp, 'added'));
    const result = { generatedAt: '2026-01-01T00:00:00.000Z', commit: 'abc1234', dirty: false, settings: {}, missed: [] };
    writeFileSync(path.join(added, 'bench/results/new-run.json'), JSON.stringify(result));
    const stale = await check(added);
    expect(stale.code).toBe(1);
    expect(stale.output).toContain('docs/benchmarks.md (line');
    expect(stale.output).toContain('run `npm run bench:report`');
  }, 30_000);
});
