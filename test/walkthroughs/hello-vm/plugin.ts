/**
 * `hello-vm`: a bcx runtime plugin as a third party writes one, against `better-compute/sdk/bcx` only (walkthrough 4).
 * Each instance is a long-lived process of its own, started detached from the plugin (so it outlives a plugin restart,
 * as a VM outlives its monitor): a small HTTP server on a loopback port it picks, answering with its instance id and
 * the SSH keys it was given. What the plugin runs is kept in `$BCX_STATE_DIR/instances.json`; liveness is what it
 * reports, checked each time: the process is alive and its server answers. The port is in the status message.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineRuntime, serveBcxPlugin, type RuntimeInstanceSpec, type RuntimeInstanceStatus } from 'better-compute/sdk/bcx';

interface Instance {
  pid: number | null;
  port: number | null;
}

const stateDir = process.env.BCX_STATE_DIR ?? process.cwd();
const stateFile = join(stateDir, 'instances.json');
const instanceDir = (id: string) => join(stateDir, 'instances', id);

/** The instance's program: serves its id and keys until it is killed. */
const SERVER = `
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
const [dir, id] = process.argv.slice(2);
const keys = readFileSync(dir + '/authorized_keys', 'utf8').split('\\n').filter(Boolean);
const server = createServer((req, res) => res.end(JSON.stringify({ id, sshKeys: keys })));
server.listen(0, '127.0.0.1', () => writeFileSync(dir + '/port', String(server.address().port)));
`;

const load = (): Record<string, Instance> => {
  try {
    return JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, Instance>;
  } catch {
    return {};
  }
};
const save = (all: Record<string, Instance>) => {
  writeFileSync(`${stateFile}.tmp`, JSON.stringify(all));
  renameSync(`${stateFile}.tmp`, stateFile);
};

/** Alive and not a zombie (a detached child nobody reaps stays in the table as `Z`). */
const alive = (pid: number | null): pid is number => {
  if (pid === null) return false;
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
};

/** The server answers with its own id: it runs, not just exists. */
async function answers(id: string, port: number | null): Promise<boolean> {
  if (port === null) return false;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
    return ((await res.json()) as { id?: string }).id === id;
  } catch {
    return false;
  }
}

async function statusOf(id: string, instance: Instance): Promise<RuntimeInstanceStatus> {
  if (alive(instance.pid) && (await answers(id, instance.port)))
    return { id, state: 'running', addresses: ['127.0.0.1'], message: `serving on 127.0.0.1:${instance.port}` };
  return { id, state: 'stopped', addresses: [] };
}

async function start(spec: RuntimeInstanceSpec): Promise<Instance> {
  const dir = instanceDir(spec.id);
  mkdirSync(dir, { recursive: true });
  const keys = Array.isArray(spec.sshKeys) ? (spec.sshKeys as string[]) : [];
  writeFileSync(join(dir, 'authorized_keys'), keys.map((k) => `${k}\n`).join(''), { mode: 0o600 });
  writeFileSync(join(dir, 'server.mjs'), SERVER);
  rmSync(join(dir, 'port'), { force: true });
  const child = spawn(process.execPath, [join(dir, 'server.mjs'), dir, spec.id], { stdio: 'ignore', detached: true });
  child.unref();
  for (let i = 0; i < 250; i++) {
    try {
      return { pid: child.pid ?? null, port: Number(readFileSync(join(dir, 'port'), 'utf8')) };
    } catch {
      await sleep(20);
    }
  }
  return { pid: child.pid ?? null, port: null };
}

async function stop(instance: Instance): Promise<void> {
  if (!alive(instance.pid)) return;
  process.kill(instance.pid, 'SIGTERM');
  for (let i = 0; i < 100 && alive(instance.pid); i++) await sleep(20);
  if (alive(instance.pid)) process.kill(instance.pid, 'SIGKILL');
}

await serveBcxPlugin(
  defineRuntime({
    manifest: { id: 'hello-vm', version: '1.0.0' },
    list: async () => Promise.all(Object.entries(load()).map(([id, instance]) => statusOf(id, instance))),
    apply: async (spec) => {
      const all = load();
      let instance = all[spec.id] ?? { pid: null, port: null };
      const running = alive(instance.pid) && (await answers(spec.id, instance.port));
      if (spec.desiredState === 'running' && !running) {
        await stop(instance);
        instance = await start(spec);
      }
      if (spec.desiredState === 'stopped') {
        await stop(instance);
        instance = { pid: null, port: null };
      }
      all[spec.id] = instance;
      save(all);
      return statusOf(spec.id, instance);
    },
    remove: async (id) => {
      const all = load();
      if (all[id]) await stop(all[id]);
      delete all[id];
      save(all);
      rmSync(instanceDir(id), { recursive: true, force: true });
    },
  }),
);
