import { setTimeout as sleep } from 'node:timers/promises';

/** How a run of iPXE ended: it booted a kernel (the `kernel` line as written), or it left network boot. */
export type IpxeOutcome = { booted: true; kernelLine: string } | { booted: false; status: number };

export interface SimulatedIpxeOptions {
  /** Settings DHCP gives (`filename`: the boot file URL). */
  dhcp: Record<string, string>;
  /** Each script fetched by `chain` (the boot artefact path, observable). */
  onScript?: (script: string) => void;
  /** What iPXE prints on the console: `echo` lines and failures. */
  console?: (line: string) => void;
  /** Power loss or reset: stops whatever iPXE is doing. */
  signal: AbortSignal;
}

/** A script that ended: `boot` reached, or `exit`/the end with the last command's status. */
type ScriptEnd = { booted: true; kernelLine: string } | { booted: false; status: number };

const OK = 0;
const FAILED = 1;
/** iPXE's delay when a `Retry-After` is not a plain number of seconds. */
const HTTP_RETRY_SECONDS = 5;

/**
 * The subset of iPXE a simulated machine's firmware runs: labels and `goto`, `set`/`inc`/`iseq`, `echo`, `sleep`,
 * `dhcp`, `chain`, `kernel`/`initrd`/`boot`, `exit`, with `&&`/`||` between commands and `${setting}` expansion.
 * `chain` behaves as iPXE's HTTP client does: an answer carrying `Retry-After` (a 503 while the site cannot mint a
 * boot token) is asked again after that many seconds, for as long as it takes; any other non-2xx answer, or no
 * answer, fails the command and the script decides what comes next. Anything else is refused, as an iPXE built
 * without that command would.
 */
export async function runSimulatedIpxe(script: string, options: SimulatedIpxeOptions): Promise<IpxeOutcome> {
  const settings = new Map<string, string>();
  return runScript(script, { ...options, settings });
}

type Context = SimulatedIpxeOptions & { settings: Map<string, string> };

async function runScript(script: string, ctx: Context): Promise<ScriptEnd> {
  const lines = script.split('\n').map((l) => l.trim());
  const labels = new Map(lines.flatMap((l, i) => (l.startsWith(':') ? [[l.slice(1), i] as const] : [])));
  let kernelLine: string | undefined;
  let status = OK;
  for (let pc = 0; pc < lines.length; pc++) {
    ctx.signal.throwIfAborted();
    const line = lines[pc]!;
    if (line === '' || line.startsWith('#') || line.startsWith(':')) continue;
    const outcome = await runLine(line, ctx, {
      kernel: (l) => (kernelLine = l),
      boot: () => kernelLine,
    });
    if ('goto' in outcome) {
      const target = labels.get(outcome.goto);
      if (target === undefined) return { booted: false, status: FAILED };
      pc = target;
      continue;
    }
    if ('end' in outcome) return outcome.end;
    status = outcome.status;
  }
  return { booted: false, status };
}

type LineOutcome = { status: number } | { goto: string } | { end: ScriptEnd };
interface KernelSlot {
  kernel(line: string): void;
  boot(): string | undefined;
}

/** One line: commands joined by `&&` (run on success) and `||` (run on failure), left to right, as iPXE does. */
async function runLine(line: string, ctx: Context, slot: KernelSlot): Promise<LineOutcome> {
  const words = line.split(/\s+/);
  const commands: { op: '&&' | '||' | null; words: string[] }[] = [{ op: null, words: [] }];
  for (const word of words) {
    if (word === '&&' || word === '||') commands.push({ op: word, words: [] });
    else commands.at(-1)!.words.push(word);
  }
  let status = OK;
  for (const { op, words: command } of commands) {
    if ((op === '&&' && status !== OK) || (op === '||' && status === OK)) continue;
    // A trailing `||` with nothing after it turns a failure into success ("ignore this one").
    if (command.length === 0) {
      status = OK;
      continue;
    }
    const outcome = await runCommand(
      command.map((w) => expand(w, ctx.settings)),
      ctx,
      slot,
    );
    if (!('status' in outcome)) return outcome;
    status = outcome.status;
  }
  return { status };
}

function expand(word: string, settings: Map<string, string>): string {
  return word.replace(/\$\{([a-z0-9_.-]+)(?::[a-z0-9]+)?\}/gi, (_, name: string) => settings.get(name) ?? '');
}

async function runCommand([name, ...args]: string[], ctx: Context, slot: KernelSlot): Promise<LineOutcome> {
  switch (name) {
    case 'echo':
      ctx.console?.(args.join(' '));
      return { status: OK };
    case 'set': {
      const [setting, ...value] = args;
      if (!setting) return { status: FAILED };
      ctx.settings.set(setting.split(':')[0]!, value.join(' '));
      return { status: OK };
    }
    case 'inc': {
      const [setting, by] = args;
      if (!setting) return { status: FAILED };
      ctx.settings.set(setting, String(Number(ctx.settings.get(setting) ?? '0') + Number(by ?? '1')));
      return { status: OK };
    }
    case 'iseq':
      return { status: args.length === 2 && args[0] === args[1] ? OK : FAILED };
    case 'sleep':
      await sleep(Number(args[0] ?? '0') * 1000, undefined, { signal: ctx.signal });
      return { status: OK };
    case 'dhcp':
      for (const [key, value] of Object.entries(ctx.dhcp)) ctx.settings.set(key, value);
      return { status: OK };
    case 'goto':
      return args[0] ? { goto: args[0] } : { status: FAILED };
    case 'exit':
      return { end: { booted: false, status: Number(args[0] ?? '0') } };
    case 'kernel':
      slot.kernel(['kernel', ...args].join(' '));
      return { status: OK };
    case 'initrd':
      return { status: OK };
    case 'boot': {
      const kernelLine = slot.boot();
      return kernelLine ? { end: { booted: true, kernelLine } } : { status: FAILED };
    }
    case 'chain': {
      const url = args.find((a) => !a.startsWith('--'));
      const script = url ? await fetchScript(url, ctx) : undefined;
      if (script === undefined) return { status: FAILED };
      ctx.onScript?.(script);
      const end = await runScript(script, ctx);
      return end.booted ? { end } : { status: end.status };
    }
    default:
      ctx.console?.(`${name}: command not found`);
      return { status: FAILED };
  }
}

/** iPXE's HTTP fetch of a script: `Retry-After` is waited out and the request repeated; other failures fail. */
async function fetchScript(url: string, ctx: Context): Promise<string | undefined> {
  for (;;) {
    let response: Response;
    try {
      response = await fetch(url, { signal: ctx.signal });
    } catch (err) {
      ctx.signal.throwIfAborted();
      ctx.console?.(`http: ${url}: ${(err as Error).message}`);
      return undefined;
    }
    const text = await response.text();
    if (response.ok) return text.startsWith('#!ipxe') ? text : undefined;
    const retryAfter = response.headers.get('retry-after');
    ctx.console?.(`http: ${url}: ${response.status}${retryAfter !== null ? `, retrying after ${retryAfter} s` : ''}`);
    if (retryAfter === null) return undefined;
    const seconds = /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) : HTTP_RETRY_SECONDS;
    await sleep(seconds * 1000, undefined, { signal: ctx.signal });
  }
}
