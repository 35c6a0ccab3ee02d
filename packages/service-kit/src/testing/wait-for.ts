/**
 * Polls `probe` every 50 ms until it answers something other than null or undefined, and returns
 * that; throws after `timeoutMs`, naming `what` it waited for.
 */
export async function waitFor<T>(
  probe: () => T | null | undefined | Promise<T | null | undefined>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
