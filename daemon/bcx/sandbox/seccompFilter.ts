/**
 * The seccomp filter every unprivileged bcx plugin runs under, as the classic BPF program the kernel takes
 * (`struct sock_filter[]`, handed to bubblewrap's `--seccomp`). Written out here rather than through libseccomp so a
 * deployed host needs no compiler or Python binding: the program is small, and `test/daemon/bcxSandbox.int.test.ts`
 * proves each refusal on the running kernel.
 *
 * What it refuses (EPERM): mounting and unmounting by either API, pivoting the root, leaving or entering namespaces
 * (`unshare`, `setns`, `clone` with any `CLONE_NEW*` flag), `bpf`, and loading or removing kernel modules. `clone3`
 * passes its flags in memory the filter cannot read, so it answers ENOSYS: the C library then falls back to `clone`,
 * whose flags the filter does check (the way container runtimes handle it). A syscall of another ABI (x32, i386)
 * kills the process, since its numbers would mean other calls.
 */

/** The x86-64 syscall numbers the filter names (arch/x86/entry/syscalls/syscall_64.tbl). */
export const FILTERED_SYSCALLS_X86_64 = {
  pivot_root: 155,
  mount: 165,
  umount2: 166,
  init_module: 175,
  delete_module: 176,
  unshare: 272,
  setns: 308,
  finit_module: 313,
  bpf: 321,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
} as const;
const CLONE = 56;
const CLONE3 = 435;

/** Every `CLONE_NEW*` flag: NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
export const CLONE_NAMESPACE_FLAGS = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const EPERM = 1;
const ENOSYS = 38;

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const retErrno = (errno: number) => 0x00050000 | errno;

/** Offsets in `struct seccomp_data`: nr, arch, then args[0] (its low 32 bits first, x86-64 being little-endian). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** The filter's program for `process.arch`; only x86-64 has one, and elsewhere a plugin cannot be sandboxed. */
export function seccompProgram(arch: string = process.arch): Buffer | undefined {
  if (arch !== 'x64') return undefined;
  const refused = Object.values(FILTERED_SYSCALLS_X86_64);
  const program: Instruction[] = [
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: ARCH },
    { code: BPF_JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH_X86_64 },
    { code: BPF_RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: NR },
    { code: BPF_JGE_K, jt: 0, jf: 1, k: X32_SYSCALL_BIT },
    { code: BPF_RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
  ];
  // A jump counts from the next instruction; every refused number lands on the EPERM return, the program's last.
  const n = refused.length;
  refused.forEach((nr, i) => program.push({ code: BPF_JEQ_K, jt: n - i + 5, jf: 0, k: nr }));
  program.push(
    { code: BPF_JEQ_K, jt: 0, jf: 1, k: CLONE3 },
    { code: BPF_RET_K, jt: 0, jf: 0, k: retErrno(ENOSYS) },
    { code: BPF_JEQ_K, jt: 0, jf: 2, k: CLONE },
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: ARG0_LOW },
    { code: BPF_JSET_K, jt: 1, jf: 0, k: CLONE_NAMESPACE_FLAGS },
    { code: BPF_RET_K, jt: 0, jf: 0, k: RET_ALLOW },
    { code: BPF_RET_K, jt: 0, jf: 0, k: retErrno(EPERM) },
  );
  return encode(program);
}

function encode(program: readonly Instruction[]): Buffer {
  const out = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
