import { describe, expect, it } from 'vitest';
import { bootSamples, siteFigures, type BootSample, type StepRow } from '../../scripts/bench/site/figures.ts';

const MB = 1e6;
const sample = (over: Partial<BootSample> = {}): BootSample => ({
  sample: 1,
  disk: '/dev/vda',
  imageBytes: 200 * MB,
  diskBytes: 256 * MB,
  fetchSeconds: 4,
  sha256Seconds: 5,
  ddWrite: 10,
  bcdWrite: 10,
  bcdImageLocal: 20,
  ddWipe: 16,
  bcdWipe: 32,
  ...over,
});
const step = (stepId: string, secondsTaken: number, output: object): StepRow => ({
  nodeId: 'bench-vm1',
  operation: stepId === 'disk.wipe' ? 'release' : 'deploy',
  stepId,
  startedAt: '2026-12-06T04:00:00.000Z',
  endedAt: new Date(Date.parse('2026-12-06T04:00:00.000Z') + secondsTaken * 1000).toISOString(),
  output: JSON.stringify(output),
});

describe('bench:site figures', () => {
  it('reads the in-boot samples from a serial log, skipping a line cut off mid-write', () => {
    const serial = [
      'bc-init: address 10.1.0.5/24 on eth0',
      `bc-bench: ${JSON.stringify(sample())}`,
      `bc-bench: ${JSON.stringify(sample({ sample: 2 }))}`,
      'bc-bench: {"sample":3,"disk":"/dev/v',
    ].join('\n');
    expect(bootSamples(serial).map((s) => s.sample)).toEqual([1, 2]);
  });

  it('compares each project figure with dd moving the same bytes: image bytes for writes, the disk twice for wipes', () => {
    const figures = siteFigures(
      [sample(), sample({ sample: 2 })],
      [step('image.write', 40, { bytesWritten: 200 * MB }), step('disk.wipe', 64, { disks: [{ sizeBytes: 256 * MB }] })],
    );
    expect(figures.imageWrite.ddMBps.median).toBe(20);
    expect(figures.imageWrite.withoutFetchOrHash).toMatchObject({ medianMBps: 20, ratioToDd: 1 });
    expect(figures.imageWrite.withoutFetch).toMatchObject({ medianMBps: 10, ratioToDd: 0.5 });
    expect(figures.imageWrite.withFetch).toMatchObject({ medianMBps: 5, ratioToDd: 0.25, samplesMBps: [5] });
    expect(figures.imageWrite.guestSha256MBps.median).toBe(40);
    expect(figures.wipe.ddMBps.median).toBe(16);
    expect(figures.wipe.inBoot).toMatchObject({ medianMBps: 8, ratioToDd: 0.5 });
    expect(figures.wipe.step).toMatchObject({ medianMBps: 4, ratioToDd: 0.25 });
  });
});
