import { existsSync } from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';

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

/**
 * Opens Bull Board at `url` in `context` and answers what went wrong (null: it rendered). The board is a
 * React app: `queueName` appears once its scripts ran and its API answered.
 */
export async function queueBoardProblem(context: BrowserContext, url: string, queueName: string): Promise<string | null> {
  const page = await context.newPage();
  const response = await page.goto(url);
  if (response?.status() !== 200) return `the board answered ${response?.status()}`;
  await page.getByText(queueName).first().waitFor({ timeout: 20_000 });
  const title = await page.title();
  return title === 'Queues' ? null : `the board's title is '${title}'`;
}

/**
 * Opens Swagger UI at `${baseUrl}/docs` in a new context and answers how many operations it drew once
 * the document titled `title` rendered.
 */
export async function swaggerUiOperations(browser: Browser, baseUrl: string, title: string): Promise<number> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.swagger-ui .info .title').filter({ hasText: title }).waitFor({ timeout: 20_000 });
    return await page.locator('.swagger-ui .opblock').count();
  } finally {
    await context.close();
  }
}
