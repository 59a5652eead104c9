import { createConnection, type Socket } from 'node:net';
import { VmError } from './vmErrors.ts';

/** An asynchronous QMP event (`SHUTDOWN`, `RESET`, `STOP`, …) with its data. */
export interface QmpEvent {
  event: string;
  data: Record<string, unknown>;
  timestamp: { seconds: number; microseconds: number };
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * A QEMU Machine Protocol client: JSON lines over QEMU's unix socket (`-qmp unix:<path>,server=on,wait=off`). After
 * the greeting it enters command mode (`qmp_capabilities`); each command carries an `id` its answer echoes, so
 * answers and events may interleave.
 */
export class QmpClient {
  readonly #socket: Socket;
  readonly #pending = new Map<string, Pending>();
  readonly #listeners = new Set<(event: QmpEvent) => void>();
  #buffer = '';
  #nextId = 1;
  #closed = false;

  private constructor(
    socket: Socket,
    readonly timeoutMs: number,
  ) {
    this.#socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#onData(chunk));
    socket.on('close', () => this.#onClose());
    socket.on('error', () => undefined);
  }

  /** Connects, reads the greeting and negotiates capabilities. */
  static async connect(path: string, options: { timeoutMs?: number } = {}): Promise<QmpClient> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = createConnection(path);
      s.once('connect', () => resolve(s));
      s.once('error', (err) => reject(new VmError('QMP_CLOSED', `QMP socket ${path}: ${err.message}`, { cause: err })));
    });
    const greeting = new Promise<void>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new VmError('QMP_TIMEOUT', 'no QMP greeting')), timeoutMs);
      const onData = (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        const newline = seen.indexOf('\n');
        if (newline < 0) return;
        clearTimeout(timer);
        socket.off('data', onData);
        // Anything after the greeting line belongs to the client proper.
        if (newline + 1 < seen.length) socket.unshift(Buffer.from(seen.slice(newline + 1)));
        if (!seen.slice(0, newline).includes('"QMP"')) reject(new VmError('QMP_ERROR', 'the socket did not greet as QMP'));
        else resolve();
      };
      socket.on('data', onData);
    });
    try {
      await greeting;
    } catch (err) {
      socket.destroy();
      throw err;
    }
    const client = new QmpClient(socket, timeoutMs);
    await client.execute('qmp_capabilities');
    return client;
  }

  /** Runs a command; resolves with its `return`, rejects with `QMP_ERROR` (QEMU's class and description). */
  execute<T = unknown>(command: string, args?: Record<string, unknown>): Promise<T> {
    if (this.#closed) return Promise.reject(new VmError('QMP_CLOSED', `QMP closed before ${command}`));
    const id = `bc-${this.#nextId++}`;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new VmError('QMP_TIMEOUT', `${command} not answered in ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.#socket.write(`${JSON.stringify({ execute: command, ...(args ? { arguments: args } : {}), id })}\n`);
    });
  }

  onEvent(listener: (event: QmpEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    this.#socket.destroy();
  }

  #onData(chunk: string): void {
    this.#buffer += chunk;
    for (let newline = this.#buffer.indexOf('\n'); newline >= 0; newline = this.#buffer.indexOf('\n')) {
      const line = this.#buffer.slice(0, newline).trim();
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line) this.#onMessage(line);
    }
  }

  #onMessage(line: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof message.event === 'string') {
      for (const listener of this.#listeners) listener(message as unknown as QmpEvent);
      return;
    }
    const pending = typeof message.id === 'string' ? this.#pending.get(message.id) : undefined;
    if (!pending) return;
    this.#pending.delete(message.id as string);
    clearTimeout(pending.timer);
    if ('error' in message) {
      const error = message.error as { class?: string; desc?: string };
      pending.reject(new VmError('QMP_ERROR', `${error.class ?? 'Error'}: ${error.desc ?? 'unknown'}`));
    } else {
      pending.resolve(message.return);
    }
  }

  #onClose(): void {
    this.#closed = true;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(new VmError('QMP_CLOSED', `QMP closed before answer ${id}`));
    }
    this.#pending.clear();
  }
}
