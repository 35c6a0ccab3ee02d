import { launchChromium, type HeadlessChromium } from '../chromium.js';
import { forSuite } from './for-suite.js';

/**
 * Headless Chromium for the calling describe block: launched before its tests (a cold start may
 * take a while on a loaded machine), closed after them. `browser` throws if read before the launch.
 */
export function chromiumForSuite(): Pick<HeadlessChromium, 'browser'> {
  const chromium = forSuite('chromiumForSuite', launchChromium, (started) => started.close(), 60_000);
  return {
    get browser() {
      return chromium().browser;
    },
  };
}
