import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm run bench:console -- --quick` (300 nodes, one cold load) as a reader of bench/README would run it: it completes
 * and writes every figure it promises, each one measured (a figure the page never reached would be missing or NaN).
 * The numbers themselves mean nothing on a busy CI machine at this size.
 */
const scratch = mkdtempSync(join(tmpdir(), 'bc-console-bench-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function npmRun(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', 'bench:console', '--', ...args], { env: { ...process.env, BC_LOG_LEVEL: 'silent' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
    child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('npm run bench:console -- --quick', () => {
  it('measures paint, bytes shipped, the node list and a filter change, and writes them', { timeout: 600_000 }, async () => {
    const out = join(scratch, 'console.json');
    const { code, output } = await npmRun(['--quick', '--out', out]);
    expect(code, output).toBe(0);
    expect(output).toMatch(/console at 300 nodes/);
    const r = JSON.parse(readFileSync(out, 'utf8')) as {
      quick: boolean;
      nodes: number;
      firstContentfulPaintMs: number;
      nodeList: { firstRowsMs: number; allRowsMs: number };
      filterChange: { nodes: number; firstRowsMs: number; allRowsMs: number };
      bytes: {
        appTransferred: number;
        appDecoded: number;
        appEncodings: Record<string, number>;
        apiTransferredToAllRows: number;
        apiTransferredForFilterChange: number;
      };
    };
    expect({ quick: r.quick, nodes: r.nodes, filtered: r.filterChange.nodes }).toEqual({ quick: true, nodes: 300, filtered: 150 });
    expect(r.firstContentfulPaintMs).toBeGreaterThan(0);
    expect(r.nodeList.firstRowsMs).toBeGreaterThan(0);
    expect(r.nodeList.allRowsMs).toBeGreaterThanOrEqual(r.nodeList.firstRowsMs);
    expect(r.filterChange.firstRowsMs).toBeGreaterThan(0);
    expect(r.filterChange.allRowsMs).toBeGreaterThanOrEqual(r.filterChange.firstRowsMs);
    // Shipped compressed: fewer bytes on the wire than the browser decoded, every file of the app encoded.
    expect(r.bytes.appTransferred).toBeGreaterThan(0);
    expect(r.bytes.appTransferred).toBeLessThan(r.bytes.appDecoded);
    expect(Object.keys(r.bytes.appEncodings).filter((e) => e === 'identity')).toEqual([]);
    expect(r.bytes.apiTransferredToAllRows).toBeGreaterThan(0);
    // Any site → one site narrows the list read in full: the console applies it without reading again.
    expect(r.bytes.apiTransferredForFilterChange).toBe(0);
  });
});
