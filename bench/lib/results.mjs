// One writer for every bench's result file, so each file says where and when its figures were measured:
// the commit (and whether the tree had uncommitted changes), the machine, its load average before and
// after, and the settings the run used. Docs quote figures only from files committed under bench/results/.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, hostname, loadavg, totalmem } from 'node:os';
import { dirname } from 'node:path';

const loadAtStart = loadavg();

function git(args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** The context block stored beside every result: commit, machine, load average. */
export function runContext() {
  const status = git(['status', '--porcelain', '--untracked-files=no']);
  return {
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirty: status === null ? null : status.length > 0,
    machine: {
      host: hostname(),
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    loadAverage: { atStart: loadAtStart.map((v) => Number(v.toFixed(2))), atEnd: loadavg().map((v) => Number(v.toFixed(2))) },
  };
}

/** Writes `{generatedAt, ...runContext(), settings, ...figures}` to `file` (a path under bench/results/). */
export function writeBenchResult(file, figures, settings = {}) {
  mkdirSync(dirname(file), { recursive: true });
  const report = { generatedAt: new Date().toISOString(), ...runContext(), settings, ...figures };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}
