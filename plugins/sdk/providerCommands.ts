/**
 * Programs a provider runs, for clouds that are driven by a local tool rather than over HTTP (libvirt's `virsh`).
 * Like `fetch`, the runner is handed to the provider in its context, so the platform runs the real program while a
 * test counts, records or crashes the calls; `mutating` plays the part HTTP's method plays for `fetch`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One run of a program: no shell, the arguments passed as they are. */
export interface ProviderCommand {
  readonly file: string;
  readonly args: readonly string[];
  /**
   * The program's standard input. It is a regular file, not a pipe, so a program that opens `/dev/stdin` by name
   * (`virsh define /dev/stdin`) can: Node's pipes are sockets, which cannot be opened that way.
   */
  readonly input?: string | Uint8Array;
  /** True when the run changes the cloud (defines, starts, deletes); false for reads, which are safe to repeat. */
  readonly mutating: boolean;
}

/** How the program ended. A non-zero `exitCode` is an answer, not a throw: the provider reads `stderr` to classify it. */
export interface CommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one command; rejects only when the program could not be run at all (not installed, aborted, killed). */
export type RunCommand = (command: ProviderCommand, signal?: AbortSignal) => Promise<CommandResult>;

/** At most this much of either stream is kept: a provider's programs answer in lines, not megabytes. */
const MAX_OUTPUT = 4 * 1024 * 1024;

/** The runner the platform hands providers: `spawn` without a shell, output as UTF-8. */
export const runCommand: RunCommand = async (command, signal) => {
  if (command.input === undefined) return spawnWith(command, 'ignore', signal);
  const dir = await mkdtemp(join(tmpdir(), 'bc-provider-input-'));
  try {
    const file = join(dir, 'input');
    await writeFile(file, command.input, { mode: 0o600 });
    const handle = await open(file, 'r');
    try {
      return await spawnWith(command, handle.fd, signal);
    } finally {
      await handle.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

function spawnWith(command: ProviderCommand, stdin: 'ignore' | number, signal: AbortSignal | undefined): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command.file, [...command.args], { stdio: [stdin, 'pipe', 'pipe'], signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    const keep = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_OUTPUT) into.push(chunk);
    };
    child.stdout?.on('data', keep(out));
    child.stderr?.on('data', keep(err));
    child.on('error', reject);
    child.on('close', (code, killedBy) => {
      if (code === null) return reject(new Error(`${command.file} was ended by ${killedBy ?? 'a signal'}`));
      resolve({ exitCode: code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}
