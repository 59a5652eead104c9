import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from './natsServer.ts';

/** Debian's Chromium (`apt-get install -y chromium`); `BC_CHROMIUM` names another binary. */
export const chromiumPath = process.env.BC_CHROMIUM ?? '/usr/bin/chromium';

/** Where browser tests leave their screenshots (gitignored). */
export const artifactsDir = fileURLToPath(new URL('../artifacts/console/', import.meta.url));

/** Headless, quiet, offline from everything but the stack under test. */
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export class ChromiumMissingError extends Error {
  override name = 'ChromiumMissingError';
}

/** A page that records every console error and uncaught exception, for the "no console errors" checks. */
export interface WatchedPage {
  readonly page: Page;
  readonly consoleErrors: string[];
  /** Saves `test/artifacts/console/<name>.png` and returns its path. */
  screenshot(name: string): Promise<string>;
}

/**
 * Chromium headless with a fresh profile of its own, disposed with the profile. Fails at once, saying what to install,
 * when the binary is missing.
 */
export async function launchChromium(): Promise<{ context: BrowserContext; newPage(): Promise<WatchedPage> } & AsyncDisposable> {
  if (!existsSync(chromiumPath)) {
    throw new ChromiumMissingError(
      `Chromium is missing at ${chromiumPath}: the console's browser tests drive Debian's Chromium headless (apt-get install -y chromium, or set BC_CHROMIUM)`,
    );
  }
  const profile = tempDir('bc-chromium-');
  const context = await chromium.launchPersistentContext(profile.path, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    viewport: { width: 1360, height: 860 },
    timezoneId: 'UTC',
    locale: 'en-GB',
    colorScheme: 'light',
  });
  mkdirSync(artifactsDir, { recursive: true });
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const consoleErrors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${m.text()} (${m.location().url})`));
      page.on('pageerror', (err) => consoleErrors.push(`uncaught: ${err.message}`));
      return {
        page,
        consoleErrors,
        async screenshot(name) {
          const path = join(artifactsDir, `${name}.png`);
          await page.screenshot({ path, fullPage: true });
          return path;
        },
      };
    },
    [Symbol.asyncDispose]: async () => {
      await context.close().catch(() => undefined);
      profile[Symbol.dispose]();
    },
  };
}
