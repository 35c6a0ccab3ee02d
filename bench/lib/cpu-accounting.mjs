// CPU time each process of a scenario spends per request (Linux /proc), so a bench can say where a
// request's cost goes: the API process, the Postgres backends serving it, Redis, and the load generator
// (autocannon runs in the bench process, on the same cores). On a machine whose cores are all busy,
// throughput is bounded by the sum: req/s <= cores / (CPU seconds per request).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export const cpuAccountingAvailable = existsSync('/proc/self/stat');

const CLOCK_TICK_US = (() => {
  try {
    return 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return 10_000;
  }
})();

/** utime + stime of a process in microseconds (0 once it is gone). */
export function processCpuUs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
  } catch {
    return 0;
  }
}

/** Redis's own CPU (INFO cpu: the server's user + system seconds), in microseconds. */
export async function redisCpuUs(redis) {
  const info = await redis.info('cpu');
  const value = (name) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
  return Math.round((value('used_cpu_user') + value('used_cpu_sys')) * 1e6);
}

/**
 * A snapshot of the CPU used so far by: the measured process(es) `apiPid` / `apiPids` (an API, or a
 * pipeline's workers), the Postgres backends `backendPids()` lists (those of the bench database; a
 * backend that appears later counts from zero), Redis, and this process.
 */
export async function cpuSnapshot({ apiPid, apiPids = apiPid ? [apiPid] : [], backendPids, redis }) {
  const pids = backendPids ? await backendPids() : [];
  const self = process.cpuUsage();
  return {
    api: apiPids.reduce((sum, pid) => sum + processCpuUs(pid), 0),
    postgres: new Map(pids.map((pid) => [pid, processCpuUs(pid)])),
    redis: redis ? await redisCpuUs(redis).catch(() => 0) : 0,
    loadGenerator: self.user + self.system,
  };
}

/** CPU microseconds per request between two snapshots, per process group, and their total. */
export function cpuPerRequest(before, after, requests) {
  let postgres = 0;
  for (const [pid, us] of after.postgres) postgres += us - (before.postgres.get(pid) ?? 0);
  const per = (us) => (requests > 0 ? Math.round(us / requests) : 0);
  const result = {
    api: per(after.api - before.api),
    postgres: per(postgres),
    redis: per(after.redis - before.redis),
    loadGenerator: per(after.loadGenerator - before.loadGenerator),
  };
  return { ...result, total: result.api + result.postgres + result.redis + result.loadGenerator };
}
