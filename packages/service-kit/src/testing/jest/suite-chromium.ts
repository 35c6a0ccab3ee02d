import { afterAll, beforeAll } from '@jest/globals';
import { launchChromium, type HeadlessChromium } from '../chromium.js';

/**
 * Headless Chromium for the calling describe block: launched before its tests (a cold start may
 * take a while on a loaded machine), closed after them. `browser` throws if read before the launch.
 */
export function chromiumForSuite(): Pick<HeadlessChromium, 'browser'> {
  let chromium: HeadlessChromium | undefined;
  beforeAll(async () => {
    chromium = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
  });
  return {
    get browser() {
      if (!chromium) throw new Error('chromiumForSuite: read browser inside a test, after beforeAll launched it');
      return chromium.browser;
    },
  };
}
