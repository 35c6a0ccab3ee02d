import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

/**
 * Issue #19, 1: the fault drills of `npm run drills` (bench/drills/run.mjs), bounded for CI: a worker
 * SIGKILLed mid-campaign, Redis lost mid-campaign and mid-workflow, Postgres restarted under HTTP load,
 * two workers racing, the API SIGKILLed mid-request. Each runs against its own private Redis (and
 * embedded Postgres for the restart) and the built dist/ entries; the script exits non-zero on a miss.
 */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('fault drills (issue #19)', () => {
  it('every drill ends with every email sent exactly once and no partial write', () => {
    const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bench/drills/run.mjs')], {
      cwd: REPO_ROOT,
      // The bounded run's verdicts go to a temporary file, not over bench/results/drills.json (a committed run's).
      env: { ...process.env, DRILL_CONTACTS: '300', DRILLS_RESULTS_FILE: path.join(os.tmpdir(), `drills-${process.pid}.json`) },
      encoding: 'utf8',
      timeout: 540_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const verdicts = (run.stdout ?? '')
      .split('\n')
      .filter((line) => /^\[(PASS|MISS)\]|^ {2}(expected|happened):|drills passed/.test(line))
      .join('\n');
    expect({ status: run.status, verdicts }).toEqual({ status: 0, verdicts: expect.stringContaining('6/6 drills passed') });
  }, 600_000);
});
