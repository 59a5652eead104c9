import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runSimulatedIpxe } from '../../daemon/simulator/ipxe.ts';
import { firstStageIpxeScript, ramdiskParamsOf } from '../../daemon/site/ipxeScript.ts';

const machineScript = '#!ipxe\nkernel http://site/ramdisk/vmlinuz bc.node=n1 bc.site=s1\ninitrd http://site/ramdisk/initrd.img\nboot\n';

/** A boot file server that answers each request with the next of `answers` (the last one repeats). */
async function bootFileServer(answers: ((res: ServerResponse) => void)[]) {
  const seen: number[] = [];
  const server = createServer((_req: IncomingMessage, res) => {
    seen.push(Date.now());
    answers[Math.min(seen.length - 1, answers.length - 1)]!(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/boot/n1/token.ipxe`,
    seen,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
const unavailable = (retryAfter: string) => (res: ServerResponse) => res.writeHead(503, { 'retry-after': retryAfter }).end('retry\n');
const notFound = (res: ServerResponse) => res.writeHead(404).end('not found\n');
const script = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/plain' }).end(machineScript);

describe('simulated iPXE', () => {
  it('waits out a 503 with Retry-After and asks again, as iPXE does, then boots the chained script', async () => {
    await using server = await bootFileServer([unavailable('1'), unavailable('1'), script]);
    const scripts: string[] = [];
    const outcome = await runSimulatedIpxe(firstStageIpxeScript(), {
      dhcp: { filename: server.url },
      onScript: (s) => scripts.push(s),
      signal: AbortSignal.timeout(20_000),
    });
    expect(outcome).toMatchObject({ booted: true });
    expect(ramdiskParamsOf(outcome.booted ? outcome.kernelLine : '')).toMatchObject({ node: 'n1', site: 's1' });
    expect(scripts).toEqual([machineScript]);
    expect(server.seen).toHaveLength(3);
    // Each retry came after the delay the server asked for.
    expect(server.seen[1]! - server.seen[0]!).toBeGreaterThanOrEqual(950);
  });

  it('runs the first stage again after a failed fetch, and leaves network boot after its last try', async () => {
    await using server = await bootFileServer([notFound, notFound, script]);
    const lines: string[] = [];
    const booted = await runSimulatedIpxe(firstStageIpxeScript({ retrySeconds: 0, maxTries: 5 }), {
      dhcp: { filename: server.url },
      console: (l) => lines.push(l),
      signal: AbortSignal.timeout(20_000),
    });
    expect(booted.booted).toBe(true);
    expect(server.seen).toHaveLength(3);
    expect(lines.filter((l) => l.includes('404'))).toHaveLength(2);

    await using refusing = await bootFileServer([notFound]);
    const gaveUp = await runSimulatedIpxe(firstStageIpxeScript({ retrySeconds: 0, maxTries: 3 }), {
      dhcp: { filename: refusing.url },
      console: (l) => lines.push(l),
      signal: AbortSignal.timeout(20_000),
    });
    expect(gaveUp).toEqual({ booted: false, status: 1 });
    expect(refusing.seen).toHaveLength(3);
    expect(lines.at(-1)).toBe('No boot script after 3 tries; leaving network boot');
  });

  it('stops waiting when the machine loses power', async () => {
    await using server = await bootFileServer([unavailable('30')]);
    const power = new AbortController();
    const run = runSimulatedIpxe(firstStageIpxeScript(), { dhcp: { filename: server.url }, signal: power.signal });
    await expect.poll(() => server.seen.length).toBe(1);
    power.abort();
    await expect(run).rejects.toThrow();
  });
});
