import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.ts';
import { RestartBackoff, type RestartBackoffOptions } from '../restartBackoff.ts';
import { makePrivateDir, PRIVATE_UMASK, restrictTree } from '../privateTree.ts';
import { pickListenPorts } from '../listenPort.ts';

export interface NatsServerProcess {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** Stops the server (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>;
  /** Kills the server with SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port and store. */
  restart(): Promise<void>;
  /**
   * From now on, a server that exits without `stop()` (a crash, an OOM kill, `kill -9`) is started again with the
   * same port, store and config, after a `RestartBackoff` delay; clients reconnect on their own. Returns the end of
   * supervision: call it first when shutting down, since a Ctrl-C reaches the server (same process group) directly.
   */
  supervise(options: { log: Logger; backoff?: RestartBackoffOptions }): () => void;
}

export class NatsServerMissingError extends Error {
  override name = 'NatsServerMissingError';
  readonly code = 'NATS_SERVER_MISSING';
  constructor(binary: string, options: { cause?: unknown } = {}) {
    super(
      `${binary} was not found. Install it with "apt-get install -y nats-server" (Debian/Ubuntu), or point BC_NATS_URL at a running nats-server with JetStream enabled.`,
      options,
    );
  }
}

/**
 * Runs a local `nats-server -js` child with its store under `storeDir`, on `port` or else on a free port below the
 * ephemeral range (`pickListenPorts`: a restart must get it back); a restart reuses that port.
 */
export async function startNatsServer(options: {
  storeDir: string;
  port?: number;
  host?: string;
  binary?: string;
  extraArgs?: string[];
  /**
   * A config file that declares JetStream and its store itself (e.g. the broker's operator-mode config): then no
   * `-js`/`-sd` is passed, since 2.9 refuses a `store_dir` given both in the file and on the command line.
   */
  configFile?: string;
}): Promise<NatsServerProcess> {
  const binary = options.binary ?? process.env.BC_NATS_SERVER_BIN ?? 'nats-server';
  const host = options.host ?? '127.0.0.1';
  const storeDir = options.storeDir;
  const portsDir = join(storeDir, 'ports');
  let port = options.port ?? (await pickListenPorts(host, 1))[0]!;
  let child: ChildProcess | undefined;
  /** Processes this module is stopping on purpose: their exit is not a crash. */
  const stopping = new WeakSet<ChildProcess>();
  let supervision: { log: Logger; backoff: RestartBackoff } | undefined;

  const launch = async () => {
    // The store holds the whole log: the owner's only, what exists and what the server will create.
    makePrivateDir(storeDir);
    restrictTree(storeDir);
    mkdirSync(portsDir, { recursive: true, mode: 0o700 });
    for (const f of readdirSync(portsDir)) rmSync(join(portsDir, f), { force: true });
    const store = options.configFile ? ['-c', options.configFile] : ['-js', '-sd', storeDir];
    const args = [...store, '-a', host, '-p', String(port), '--ports_file_dir', portsDir, ...(options.extraArgs ?? [])];
    // The child inherits the creation mask at spawn: set it for that moment only.
    const umask = process.umask(PRIVATE_UMASK);
    let proc: ChildProcess;
    try {
      proc = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    } finally {
      process.umask(umask);
    }
    child = proc;
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const spawnError = new Promise<never>((_, reject) => {
      proc.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new NatsServerMissingError(binary, { cause: err }) : err));
      proc.once('exit', (code) => reject(new Error(`nats-server exited with ${code} during start-up: ${stderr.trim()}`)));
    });
    port = await Promise.race([waitForPort(portsDir, proc.pid!), spawnError]);
    const startedAt = Date.now();
    proc.once('exit', (code, signal) => {
      if (stopping.has(proc) || !supervision) return;
      const { log, backoff } = supervision;
      const restartInMs = backoff.delayAfter(Date.now() - startedAt);
      log.error({ code, signal, stderr: stderr.trim().slice(-1000), restartInMs }, 'embedded nats-server exited; restarting it');
      relaunchAfter(restartInMs);
    });
  };

  const relaunchAfter = (delayMs: number) => {
    setTimeout(() => {
      // Stopped meanwhile, or already started again (`restart()`).
      if (!supervision || (child && (stopping.has(child) || (child.exitCode === null && child.signalCode === null)))) return;
      launch().then(
        () => supervision?.log.info({ port }, 'embedded nats-server is back'),
        (err: unknown) => {
          if (!supervision) return;
          const retryInMs = supervision.backoff.delayAfter(0);
          supervision.log.error({ err, retryInMs }, 'embedded nats-server did not start again; retrying');
          relaunchAfter(retryInMs);
        },
      );
    }, delayMs).unref();
  };

  const terminate = async (signal: NodeJS.Signals) => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    // SIGKILL stands for a crash: a supervised server comes back from it.
    if (signal !== 'SIGKILL') stopping.add(proc);
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (err) {
      // A picked port can be taken between the pick and the server's bind: pick again.
      if (options.port !== undefined || attempt === 3 || !String(err).includes('address already in use')) throw err;
      port = (await pickListenPorts(host, 1))[0]!;
    }
  }
  return {
    get url() {
      return `nats://${host}:${port}`;
    },
    get port() {
      return port;
    },
    storeDir,
    stop: () => {
      supervision = undefined;
      return terminate('SIGTERM');
    },
    kill: () => terminate('SIGKILL'),
    restart: async () => {
      await terminate('SIGTERM');
      await launch();
    },
    supervise: ({ log, backoff }) => {
      const own = { log, backoff: new RestartBackoff(backoff) };
      supervision = own;
      return () => {
        if (supervision === own) supervision = undefined;
      };
    },
  };
}

async function waitForPort(portsDir: string, pid: number): Promise<number> {
  const file = join(portsDir, `nats-server_${pid}.ports`);
  for (let i = 0; i < 200; i++) {
    try {
      const ports = JSON.parse(readFileSync(file, 'utf8')) as { nats: string[] };
      const url = ports.nats[0];
      if (url) return Number(new URL(url).port);
    } catch {
      // not written yet
    }
    await sleep(25);
  }
  throw new Error(`nats-server did not report its port within 5 s (${file})`);
}
