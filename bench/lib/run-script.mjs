/**
 * Runs a benchmark's `main`, always followed by its `cleanup` (stop the servers, drop the databases),
 * also on Ctrl+C / SIGTERM; exits 1 on failure with one line for expected failures (`err.oneLine`).
 */
export async function runBenchScript(label, main, cleanup) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.error(`${label}: ${signal}, cleaning up`);
      cleanup().finally(() => process.exit(130));
    });
  }
  let exitCode = 0;
  try {
    await main();
  } catch (err) {
    console.error(err.oneLine ? `${label}: ${err.message}` : err);
    exitCode = 1;
  } finally {
    await cleanup();
  }
  process.exit(exitCode);
}

export { fail } from '../../scripts/lib/apps.mjs';
