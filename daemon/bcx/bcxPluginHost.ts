import { BcxFrameReader, encodeBcxFrame } from '../../schemas/bcx/bcxFrames.ts';
import { BCX_PROTOCOL_VERSION, BcxPluginFrame, type BcxManifest } from '../../schemas/bcx/bcxProtocol.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { BcxError } from './bcxErrors.ts';
import { sha256OfFile, type PinnedPlugin } from './pluginPins.ts';
import { launchPlugin, type LaunchedPlugin } from './sandbox/pluginSandbox.ts';

export interface BcxPluginHostOptions {
  readonly stateRoot: string;
  /** On the daemon's privileged list: no sandbox (see `launchPlugin`). */
  readonly privileged?: boolean;
  readonly log: Logger;
  readonly helloTimeoutMs?: number;
  /** First restart delay, doubled per crash up to `maxRestartDelayMs`; back to the first after a minute of running. */
  readonly restartDelayMs?: number;
  readonly maxRestartDelayMs?: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * One pinned bcx plugin, kept running: checked against its pin before every start, launched in its sandbox, held to
 * its hello (the pinned id, protocol 1), restarted with a doubling delay when it exits, and stopped for good on
 * `stop()`. Invocations in flight when it exits fail with `PLUGIN_EXITED`: whether to try again is the caller's call
 * (an `apply` is idempotent by contract; the host does not guess).
 */
export class BcxPluginHost {
  #process: LaunchedPlugin | undefined;
  #manifest: BcxManifest | undefined;
  #ready = false;
  #stopped = false;
  #nextId = 0;
  #restartDelayMs: number;
  #restartTimer: NodeJS.Timeout | undefined;
  #startedAtMs = 0;
  readonly #pending = new Map<number, Pending>();
  /** How many times the plugin was started: the first start and every restart. */
  starts = 0;

  constructor(
    readonly plugin: PinnedPlugin,
    private readonly options: BcxPluginHostOptions,
  ) {
    this.#restartDelayMs = options.restartDelayMs ?? 1_000;
  }

  /** The manifest of the running plugin's hello; undefined until it said one. */
  get manifest(): BcxManifest | undefined {
    return this.#manifest;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Starts the plugin and resolves once it said hello; throws (and does not restart) when the first start fails. */
  async start(): Promise<void> {
    try {
      await this.#launch();
    } catch (err) {
      // A plugin that cannot start once is a pin, sandbox or protocol problem a restart will not mend.
      this.#stopped = true;
      clearTimeout(this.#restartTimer);
      throw err;
    }
  }

  async invoke(operation: string, args: readonly unknown[], timeoutMs = 60_000): Promise<unknown> {
    const running = this.#process;
    if (!running || !this.#ready) throw new BcxError('PLUGIN_NOT_RUNNING', `plugin ${this.plugin.pin.id} is not running`);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new BcxError('INVOKE_TIMEOUT', `${this.plugin.pin.id}.${operation} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      running.child.stdin.write(encodeBcxFrame({ type: 'invoke', id, operation, args }));
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#restartTimer);
    const running = this.#process;
    if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return;
    const exited = new Promise((resolve) => running.child.once('exit', resolve));
    running.child.stdin.end();
    const kill = setTimeout(() => running.child.kill('SIGKILL'), 5_000);
    running.child.kill('SIGTERM');
    await exited;
    clearTimeout(kill);
  }

  async #launch(): Promise<void> {
    const { pin, program } = this.plugin;
    const digest = await sha256OfFile(program);
    if (digest !== pin.sha256) throw new BcxError('PLUGIN_PIN_MISMATCH', `${program} hashes to ${digest}, pinned ${pin.sha256}`);
    const launched = await launchPlugin({
      pluginId: pin.id,
      executable: pin.interpreter ?? program,
      args: pin.interpreter ? [program, ...pin.args] : pin.args,
      stateRoot: this.options.stateRoot,
      privileged: this.options.privileged ?? false,
    });
    this.#process = launched;
    this.#ready = false;
    this.#manifest = undefined;
    this.#startedAtMs = Date.now();
    this.starts++;
    const { child } = launched;
    const log = this.options.log.child({ plugin: pin.id, pid: child.pid });
    let hello: { resolve(): void; reject(err: Error): void } | undefined;
    const helloSaid = new Promise<void>((resolve, reject) => (hello = { resolve, reject }));
    const refuse = (err: BcxError) => {
      log.warn({ code: err.code }, err.message);
      hello?.reject(err);
      child.kill('SIGKILL');
    };
    const helloTimer = setTimeout(
      () => refuse(new BcxError('PLUGIN_HELLO_REFUSED', `no hello within ${this.options.helloTimeoutMs ?? 10_000} ms`)),
      this.options.helloTimeoutMs ?? 10_000,
    );
    const reader = new BcxFrameReader();
    child.stdout.on('data', (chunk: Buffer) => {
      let frames: unknown[];
      try {
        frames = reader.push(chunk);
      } catch (err) {
        return refuse(new BcxError('PLUGIN_PROTOCOL_ERROR', (err as Error).message));
      }
      for (const raw of frames) {
        const frame = BcxPluginFrame.safeParse(raw);
        if (!frame.success) return refuse(new BcxError('PLUGIN_PROTOCOL_ERROR', `not a bcx frame: ${frame.error.issues[0]?.message ?? ''}`));
        const message = frame.data;
        if (message.type === 'hello') {
          if (this.#ready || message.protocol !== BCX_PROTOCOL_VERSION || message.manifest.id !== pin.id)
            return refuse(new BcxError('PLUGIN_HELLO_REFUSED', `hello from ${message.manifest.id} speaking bcx ${message.protocol}`));
          clearTimeout(helloTimer);
          this.#manifest = message.manifest;
          this.#ready = true;
          hello?.resolve();
          continue;
        }
        const pending = this.#pending.get(message.id);
        if (!pending) continue;
        this.#pending.delete(message.id);
        clearTimeout(pending.timer);
        if (message.ok) pending.resolve(message.value);
        else pending.reject(new BcxError(message.error.code, message.error.message));
      }
    });
    // stderr is the plugin's log: kept line by line, bounded, never parsed.
    child.stderr.on('data', (chunk: Buffer) => log.info({ stderr: chunk.toString('utf8').slice(0, 2_000) }, 'plugin says'));
    child.stdin.on('error', () => undefined);
    child.once('exit', (code, signal) => {
      clearTimeout(helloTimer);
      this.#ready = false;
      hello?.reject(new BcxError('PLUGIN_EXITED', `exited (${signal ?? code}) before its hello`));
      for (const [id, pending] of this.#pending) {
        clearTimeout(pending.timer);
        pending.reject(new BcxError('PLUGIN_EXITED', `plugin ${pin.id} exited (${signal ?? code}) before it answered`));
        this.#pending.delete(id);
      }
      if (this.#stopped) return;
      this.#scheduleRestart(log, code, signal);
    });
    await helloSaid;
  }

  #scheduleRestart(log: Logger, code: number | null, signal: NodeJS.Signals | null): void {
    if (Date.now() - this.#startedAtMs >= 60_000) this.#restartDelayMs = this.options.restartDelayMs ?? 1_000;
    const delay = this.#restartDelayMs;
    this.#restartDelayMs = Math.min(delay * 2, this.options.maxRestartDelayMs ?? 60_000);
    log.warn({ code, signal, restartInMs: delay }, 'plugin exited; restarting');
    this.#restartTimer = setTimeout(() => {
      this.#launch().catch((err: unknown) => {
        log.warn({ err }, 'plugin restart failed');
        if (!this.#stopped) this.#scheduleRestart(log, null, null);
      });
    }, delay);
  }
}
