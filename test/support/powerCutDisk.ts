import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DurableFs } from '../../daemon/agent/durableFile.ts';

/** Thrown by every call after the power went: the process is gone. */
export class PowerCut extends Error {
  override name = 'PowerCut';
}

type Inode = number;
type MetadataOp = { op: 'link'; path: string; inode: Inode } | { op: 'rename'; from: string; to: string };

interface DiskState {
  /** Directory entries: path → inode. */
  readonly entries: Map<string, Inode>;
  /** File contents by inode. */
  readonly data: Map<Inode, Buffer>;
}

const copy = (s: DiskState): DiskState => ({ entries: new Map(s.entries), data: new Map(s.data) });

function applyOp(state: DiskState, op: MetadataOp): void {
  if (op.op === 'link') state.entries.set(op.path, op.inode);
  else {
    const inode = state.entries.get(op.from);
    if (inode === undefined) return;
    state.entries.delete(op.from);
    state.entries.set(op.to, inode);
  }
}

/**
 * A disk as a power cut leaves it, after the conservative reading of POSIX and of ext4 with delayed allocation: file
 * data is on the platter once its file was fsynced (before that, any dirty file may or may not have been written
 * back), and directory changes (creating, renaming) reach it in the order they were made, as a journal commits
 * them, only as far as the last fsync of their folder guarantees (any longer prefix may have made it too). A file whose
 * creation and rename were committed but whose data was not comes back empty: the failure a rename without fsync
 * causes. `fsAfter(n)` is a `DurableFs` on this disk whose power goes after `n` calls; `survivors()` lists every state
 * the disk may come back in, each materialised in a real folder by `restore` for the code under test to read.
 */
export class PowerCutDisk {
  #durable: DiskState = { entries: new Map(), data: new Map() };
  #live: DiskState = { entries: new Map(), data: new Map() };
  /** Directory changes not yet made durable by a folder fsync, in order. */
  #pending: MetadataOp[] = [];
  #nextInode = 1;
  #fds = new Map<number, { path: string; inode?: Inode; position: number }>();
  #nextFd = 100;

  /** A file already on the disk, durable (what an earlier, completed write left). */
  seed(path: string, content: string | Buffer): void {
    const inode = this.#nextInode++;
    for (const state of [this.#durable, this.#live]) {
      state.entries.set(path, inode);
      state.data.set(inode, Buffer.from(content));
    }
  }

  /** The file-system calls of `DurableFs` against this disk; the power goes once `budget` calls were made. */
  fsAfter(budget: number): DurableFs & { readonly calls: number } {
    let calls = 0;
    const step = () => {
      if (calls >= budget) throw new PowerCut('power cut');
      calls += 1;
    };
    const fs = {
      get calls() {
        return calls;
      },
      openSync: (path: unknown, flags?: unknown) => {
        step();
        const file = String(path);
        const fd = this.#nextFd++;
        if (flags === 'r') {
          this.#fds.set(fd, { path: file, position: 0 });
          return fd;
        }
        let inode = this.#live.entries.get(file);
        if (inode === undefined) {
          inode = this.#nextInode++;
          this.#live.entries.set(file, inode);
          this.#pending.push({ op: 'link', path: file, inode });
        }
        this.#live.data.set(inode, Buffer.alloc(0));
        this.#fds.set(fd, { path: file, inode, position: 0 });
        return fd;
      },
      writeSync: (fd: number, buffer: unknown, offset?: unknown, length?: unknown) => {
        step();
        const open = this.#fds.get(fd)!;
        const bytes = Buffer.from(buffer as Uint8Array).subarray(Number(offset ?? 0), Number(offset ?? 0) + Number(length ?? (buffer as Uint8Array).length));
        const current = this.#live.data.get(open.inode!)!;
        this.#live.data.set(open.inode!, Buffer.concat([current.subarray(0, open.position), bytes]));
        open.position += bytes.length;
        return bytes.length;
      },
      fsyncSync: (fd: number) => {
        step();
        const open = this.#fds.get(fd)!;
        if (open.inode !== undefined) {
          this.#durable.data.set(open.inode, Buffer.from(this.#live.data.get(open.inode)!));
          return;
        }
        // A folder: its entries' changes so far are durable (the whole journal up to here, in order).
        for (const op of this.#pending) applyOp(this.#durable, op);
        this.#pending = [];
      },
      closeSync: (fd: number) => {
        step();
        this.#fds.delete(fd);
      },
      renameSync: (from: unknown, to: unknown) => {
        step();
        applyOp(this.#live, { op: 'rename', from: String(from), to: String(to) });
        this.#pending.push({ op: 'rename', from: String(from), to: String(to) });
      },
      fchmodSync: () => step(),
    };
    return fs;
  }

  /** Every state the disk may come back in after the power went now. */
  survivors(): DiskState[] {
    const dirty = [...this.#live.data.keys()].filter((inode) => !this.#live.data.get(inode)!.equals(this.#durable.data.get(inode) ?? Buffer.alloc(0)));
    const out: DiskState[] = [];
    for (let committed = 0; committed <= this.#pending.length; committed++) {
      for (let written = 0; written < 1 << dirty.length; written++) {
        const state = copy(this.#durable);
        for (const op of this.#pending.slice(0, committed)) applyOp(state, op);
        dirty.forEach((inode, i) => {
          if (written & (1 << i)) state.data.set(inode, Buffer.from(this.#live.data.get(inode)!));
        });
        // A committed link with no data written back is an empty file.
        for (const inode of state.entries.values()) if (!state.data.has(inode)) state.data.set(inode, Buffer.alloc(0));
        out.push(state);
      }
    }
    return out;
  }

  /** Writes a surviving state's files under `root` (a disk path `/a/b` becomes `<root>/a/b`). */
  static restore(state: DiskState, root: string): void {
    for (const [path, inode] of state.entries) {
      const file = join(root, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, state.data.get(inode)!);
    }
  }
}
