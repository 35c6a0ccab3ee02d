// Preloaded into a process the bench wants a CPU profile of (`node --import <this file> app.js`, set by
// the benches through NODE_OPTIONS when BENCH_CPU_PROF is given). It starts V8's sampling profiler at
// once and writes the profile to $BENCH_CPU_PROF_FILE on SIGUSR2, so the bench can take it before it
// stops the process: `--cpu-prof` writes only on a normal exit, and the apps end on a re-raised SIGTERM.
// The profile's timestamps are CLOCK_MONOTONIC microseconds, like process.hrtime in the bench, so the
// bench can cut it into its scenarios (bench/lib/cpu-profile-summary.mjs).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_CPU_PROF_FILE;
// Worker threads (a log transport's) inherit NODE_OPTIONS too: profile the main thread only.
if (file && isMainThread) {
  const session = new Session();
  session.connect();
  const post = (method, params = {}) =>
    new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_CPU_PROF_INTERVAL_US ?? 1000) });
  await post('Profiler.start');
  process.on('SIGUSR2', () => {
    post('Profiler.stop')
      .then(({ profile }) => writeFileSync(file, JSON.stringify(profile)))
      .catch((err) => console.error(`cpu profile: ${err.message}`));
  });
}
