import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); `.ci/run` installs it when it is missing. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The flags that let Chromium run as root on a machine without a network (no update or sync calls). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface HeadlessChromium {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Headless Debian Chromium through playwright-core (which gives it a fresh temporary profile). A
 * missing Chromium fails the test with the install command: a browser test is never skipped silently.
 */
export async function launchChromium(): Promise<HeadlessChromium> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: install Debian's Chromium (apt-get install -y chromium) to run the browser tests`);
  }
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  return { browser, close: () => browser.close() };
}
