import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { apiClient } from './apiClient.ts';
import { launchChromium } from './chromium.ts';
import { freePort } from './freePort.ts';
import { startImageServer } from './imageServer.ts';
import { tempDir } from './natsServer.ts';
import { startStackProcess } from './stackProcess.ts';

/**
 * `npm start` (which builds the console when it is stale) with a simulated site of `machines` machines, on an embedded
 * nats-server and a data dir of its own; `admin` is the bootstrap admin token's client.
 */
export async function startConsoleStack(machines: number) {
  const dir = tempDir('bc-console-');
  const stack = await startStackProcess({ BC_DATA_DIR: dir.path, BC_SIM_MACHINES: String(machines), BC_SIM_BMC_PORT_BASE: '0' }, await freePort()).catch(
    (err: unknown) => {
      dir[Symbol.dispose]();
      throw err;
    },
  );
  const admin = apiClient(stack.api, stack.token);
  // The API is ready before the simulated site's own process has created its site: a command naming site `sim` right
  // away raced that process's start (PRECONDITION_FAILED "site sim does not exist" once on a loaded machine). With no
  // machines there is no simulated site.
  const siteExists = () =>
    admin.getJson('/v1/sites/sim').then(
      () => true,
      () => false,
    );
  const siteDeadline = Date.now() + 120_000;
  while (machines > 0 && !(await siteExists())) {
    if (Date.now() > siteDeadline) {
      await stack.stop();
      dir[Symbol.dispose]();
      throw new Error(`the simulated site did not create site sim within 120 s:\n${stack.output()}`);
    }
    await sleep(200);
  }
  /** A new API token of `role` (and tenant), as `POST /v1/tokens` answers it once. */
  const createToken = async (tokenId: string, role: string, tenantId?: string): Promise<string> => {
    const res = await fetch(`${stack.api}/v1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tokenId, role, ...(tenantId ? { tenantId } : {}) }),
    });
    if (res.status !== 201) throw new Error(`token ${tokenId} was not created: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { token: string }).token;
  };
  return {
    api: stack.api,
    /** The stack's data dir: its stack record and broker trust chain, for a test that talks NATS as a control-plane process. */
    dataDir: dir.path,
    adminToken: stack.token,
    admin,
    createToken,
    logs: stack.output,
    [Symbol.asyncDispose]: async () => {
      await stack.stop();
      dir[Symbol.dispose]();
    },
  };
}

/** What a browser test of the console needs: the stack, Chromium, and an image server to deploy from; one dispose. */
export async function startConsoleRig(machines: number) {
  const started = await Promise.allSettled([startConsoleStack(machines), launchChromium(), startImageServer(undefined, { partitioned: true })] as const);
  const dispose = async () => {
    for (const r of [...started].reverse()) if (r.status === 'fulfilled') await r.value[Symbol.asyncDispose]();
  };
  const failure = started.find((r) => r.status === 'rejected');
  if (failure) {
    await dispose();
    throw failure.reason;
  }
  const [stack, browser, image] = started.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
    Awaited<ReturnType<typeof startConsoleStack>>,
    Awaited<ReturnType<typeof launchChromium>>,
    Awaited<ReturnType<typeof startImageServer>>,
  ];
  return { stack, browser, image, [Symbol.asyncDispose]: dispose };
}

/** Signs in through the console's own form and waits for the signed-in frame. */
export async function signIn(page: Page, api: string, token: string, path = '/'): Promise<void> {
  await page.goto(`${api}${path}`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}
