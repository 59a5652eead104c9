import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { NodeLogSay } from '../../daemon/agent/nodeLogPublisher.ts';
import { tailSerialConsole, type SerialTail } from '../../daemon/site/serialConsoleTail.ts';

describe('serial console tail', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bc-serial-'));
  let tail: SerialTail | undefined;
  afterEach(async () => {
    await tail?.stop();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends what the console prints from now on, line by line, without terminal escapes; starts over when the file is cut', async () => {
    const file = join(dir, 'vm1.serial.log');
    writeFileSync(file, 'an earlier boot\n');
    const said: NodeLogSay[] = [];
    tail = tailSerialConsole(file, 'n1', { say: (line) => said.push(line) }, 20);
    await new Promise((resolve) => setTimeout(resolve, 100));
    appendFileSync(file, '\u001b[2J\u001b[1;1HBooting Linux\r\nfirst ');
    await expect.poll(() => said.map((s) => s.text)).toEqual(['Booting Linux']);
    appendFileSync(file, 'half\nlogin: \n');
    await expect.poll(() => said.map((s) => s.text)).toEqual(['Booting Linux', 'first half', 'login:']);
    expect(said.every((s) => s.nodeId === 'n1' && s.stream === 'stdout')).toBe(true);
    // A new power-on truncates the file: its output is read from the start.
    writeFileSync(file, 'BIOS\n');
    await expect.poll(() => said.map((s) => s.text).at(-1)).toBe('BIOS');
  });

  it('waits for a file that is not there yet', async () => {
    const file = join(dir, 'vm2.serial.log');
    const said: NodeLogSay[] = [];
    tail = tailSerialConsole(file, 'n2', { say: (line) => said.push(line) }, 20);
    await new Promise((resolve) => setTimeout(resolve, 60));
    writeFileSync(file, '');
    await new Promise((resolve) => setTimeout(resolve, 60));
    appendFileSync(file, 'hello\n');
    await expect.poll(() => said.map((s) => s.text)).toEqual(['hello']);
  });
});
