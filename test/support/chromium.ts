import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's package (`apt-get install chromium`, done by .ci/run); Playwright never downloads a browser here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Headless Chromium with the flags this closed network needs (no background or component
 * traffic that would be refused) plus any the test adds (a fake microphone, say).
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-gpu', ...extraArgs],
  });
}
