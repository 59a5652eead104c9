import type { BrowserContext, Page } from 'playwright-core';

/** What one cold load of the node list measured, in the page's own clock (ms from navigation start). */
export interface ConsoleLoad {
  firstContentfulPaintMs: number;
  /** The first node rows drawn. */
  firstRowsMs: number;
  /** Every node read (the count no longer says "loading more"). */
  allRowsMs: number;
  /** From the site filter's change to the first rows of the new selection, and to all of them. */
  filterFirstRowsMs: number;
  filterAllRowsMs: number;
  /** The console's files (HTML, scripts, styles) as they crossed the wire, and how they were encoded. */
  appBytes: { transferred: number; decoded: number; encodings: Record<string, number> };
  /** The API's answers until the list was complete (node pages, session, sites), as they crossed the wire. */
  apiBytes: number;
  /** The same for the filter change's reads. */
  filterApiBytes: number;
}

/**
 * Watches the page from its first byte: when the first node row appears, when the count says the list is complete,
 * and the same after a `change` event (the site filter). A MutationObserver sees the DOM as it is committed, so the
 * times are the page's, not the test driver's polling.
 */
const watcher = (total: number, filtered: number, site: string) => `(() => {
  const bench = (window.__bench = {});
  const countIs = (n) => (document.querySelector('p.count')?.textContent ?? '') === n + ' nodes';
  const check = () => {
    const now = performance.now();
    const first = document.querySelector('[data-node]');
    if (bench.changeAt === undefined) {
      if (first && bench.firstRows === undefined) bench.firstRows = now;
      if (countIs(${total}) && bench.allRows === undefined) bench.allRows = now;
    } else {
      if (first && first.textContent.includes(${JSON.stringify(site)}) && bench.filterFirstRows === undefined) bench.filterFirstRows = now;
      if (countIs(${filtered}) && bench.filterAllRows === undefined) bench.filterAllRows = now;
    }
  };
  document.addEventListener('change', () => { bench.changeAt = performance.now(); bench.changeEntries = performance.getEntriesByType('resource').length; }, true);
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})()`;

interface Timing {
  name: string;
  initiatorType: string;
  transferSize: number;
  decodedBodySize: number;
}

/** One cold load (no cache) of `/nodes` signed in with `token`, then the site filter changed to `site`. */
export async function measureLoad(context: BrowserContext, api: string, token: string, total: number, site: string, filtered: number): Promise<ConsoleLoad> {
  const page = await context.newPage();
  try {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const encodings: Record<string, number> = {};
    page.on('response', (res) => {
      const path = new URL(res.url()).pathname;
      if (path.startsWith('/v1/')) return;
      const encoding = res.headers()['content-encoding'] ?? 'identity';
      encodings[encoding] = (encodings[encoding] ?? 0) + 1;
    });
    await page.addInitScript(`sessionStorage.setItem('bc-console-token', ${JSON.stringify(token)}); ${watcher(total, filtered, site)}`);
    await page.goto(`${api}/nodes`);
    await until(page, 'window.__bench.allRows !== undefined');
    const fcp = await page.evaluate<number>("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1");
    await page.locator('#filter-site').selectOption(site);
    await until(page, 'window.__bench.filterAllRows !== undefined');
    const bench = await page.evaluate<Record<string, number>>('window.__bench');
    const entries = await page.evaluate<Timing[]>(
      "[...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map((e) => ({ name: e.name, initiatorType: e.initiatorType, transferSize: e.transferSize, decodedBodySize: e.decodedBodySize }))",
    );
    // The navigation entry first, then resources in the order they started: those after the change are the filter's.
    const before = entries.slice(0, bench.changeEntries! + 1);
    const after = entries.slice(bench.changeEntries! + 1);
    const isApi = (e: Timing) => new URL(e.name).pathname.startsWith('/v1/');
    const app = before.filter((e) => !isApi(e));
    return {
      firstContentfulPaintMs: fcp,
      firstRowsMs: bench.firstRows!,
      allRowsMs: bench.allRows!,
      filterFirstRowsMs: bench.filterFirstRows! - bench.changeAt!,
      filterAllRowsMs: bench.filterAllRows! - bench.changeAt!,
      appBytes: { transferred: sum(app.map((e) => e.transferSize)), decoded: sum(app.map((e) => e.decodedBodySize)), encodings },
      apiBytes: sum(before.filter(isApi).map((e) => e.transferSize)),
      filterApiBytes: sum(after.filter(isApi).map((e) => e.transferSize)),
    };
  } finally {
    await page.close();
  }
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * Polls `condition` in the page (through the DevTools protocol, as `page.evaluate` does: `waitForFunction`'s polling
 * evaluates a string with `eval`, which the console's CSP forbids). The times come from the page's own stamps, so the
 * polling interval does not enter the figures.
 */
async function until(page: Page, condition: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(condition))) {
    if (Date.now() > deadline) throw new Error(`the page never reached ${condition} in ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
