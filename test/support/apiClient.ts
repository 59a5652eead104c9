import { setTimeout as sleep } from 'node:timers/promises';

/** A tiny client of the HTTP API for acceptance tests: commands, node reads and waits on node state, as `token`. */
export function apiClient(api: string, token: string) {
  const authorization = `Bearer ${token}`;
  /** GET as an operator's client would: a 503 with Retry-After (NATS briefly away) is retried a few times. */
  const getJson = async (path: string): Promise<any> => {
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${api}${path}`, { headers: { authorization } });
      if (res.ok) return res.json();
      const retryAfter = res.headers.get('retry-after');
      if (res.status !== 503 || retryAfter === null || attempt >= 5) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
      await sleep(Number(retryAfter) * 1_000);
    }
  };
  const command = async (name: string, body: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${api}/v1/commands/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const node = (nodeId: string) => getJson(`/v1/nodes/${nodeId}`);
  /** Polls until the node is in `state`; fails fast when it lands in `failed` instead. */
  const waitForNodeState = async (nodeId: string, state: string, timeoutMs = 60_000, intervalMs = 100): Promise<any> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const current = await node(nodeId).catch(() => undefined);
      if (current?.state === state) return current;
      if (current?.state === 'failed' && state !== 'failed') throw new Error(`node ${nodeId} failed: ${JSON.stringify(current.failure)}`);
      if (Date.now() > until) throw new Error(`node ${nodeId} is ${current?.state ?? 'unknown'}, not ${state}, after ${timeoutMs} ms`);
      await sleep(intervalMs);
    }
  };
  return { api, getJson, command, node, waitForNodeState };
}
