import { describe, expect, it } from 'vitest';
import type { WorkflowStepView } from '../../schemas/metal/workflowViews.ts';
import { stepOutputFacts } from '../../services/console/app/src/workflows/stepOutputs.ts';
import { durationText, stepBars } from '../../services/console/app/src/workflows/stepTimeline.ts';

const step = (stepIndex: number, patch: Partial<WorkflowStepView>): WorkflowStepView => ({
  stepIndex,
  stepId: `s${stepIndex}`,
  runsOn: 'site',
  destructive: false,
  params: {},
  state: 'pending',
  attempts: 0,
  output: null,
  errorCode: null,
  error: null,
  rejectedResults: 0,
  startedAt: null,
  endedAt: null,
  ...patch,
});
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

describe('console step timeline', () => {
  it('places each step on the workflow’s axis, grows running ones to now and leaves unstarted ones without a bar', () => {
    const workflow = {
      startedAt: at(0),
      endedAt: null,
      steps: [step(0, { state: 'succeeded', startedAt: at(0), endedAt: at(10) }), step(1, { state: 'running', startedAt: at(10), attempts: 1 }), step(2, {})],
    };
    const { axisMs, bars } = stepBars(workflow, Date.parse(at(40)));
    expect(axisMs).toBe(40_000);
    expect(bars[0]).toEqual({ stepIndex: 0, offsetPct: 0, widthPct: 25, durationMs: 10_000, open: false });
    expect(bars[1]).toEqual({ stepIndex: 1, offsetPct: 25, widthPct: 75, durationMs: 30_000, open: true });
    expect(bars[2]).toBeNull();
  });

  it('ends the axis at the workflow’s end and keeps a millisecond step visible', () => {
    const workflow = {
      startedAt: at(0),
      endedAt: at(100),
      steps: [
        step(0, { state: 'succeeded', startedAt: at(0), endedAt: new Date(Date.parse(at(0)) + 5).toISOString() }),
        step(1, { state: 'failed', startedAt: at(1) }),
      ],
    };
    const { axisMs, bars } = stepBars(workflow, Date.parse(at(500)));
    expect(axisMs).toBe(100_000);
    expect(bars[0]!.widthPct).toBeGreaterThan(0.5);
    // A failed step the read model has no end for ends with its workflow, not at "now".
    expect(bars[1]).toMatchObject({ offsetPct: 1, widthPct: 99, open: false });
  });

  it('says durations as operators do', () => {
    expect([850, 12_400, 185_000, 3_720_000].map(durationText)).toEqual(['850 ms', '12.4 s', '3 min 5 s', '1 h 02 min']);
  });

  it('reads a wipe report: each disk, the bytes erased and whether the ramdisk attested it', () => {
    const facts = stepOutputFacts({
      method: 'zero',
      attested: true,
      agentId: 'ramdisk-1',
      disks: [
        { path: '/dev/sda', serial: 'S1', model: 'QEMU HARDDISK', sizeBytes: 2_000_000_000, method: 'zero', verifiedBytes: 2_000_000_000 },
        {
          path: '/dev/sdb',
          serial: null,
          model: null,
          sizeBytes: 1_000_000_000,
          method: 'discard',
          discardedBytes: 1_000_000_000,
          secure: false,
          sample: { seed: 'a'.repeat(32), count: 64, blockBytes: 4096 },
        },
      ],
    });
    expect(facts).toEqual([
      { kind: 'disk', text: 'Wiped /dev/sda (QEMU HARDDISK, serial S1): zeroed, 2 GB read back' },
      { kind: 'disk', text: 'Wiped /dev/sdb: discard of 1 GB, 64 sampled blocks read back as zeros' },
      { kind: 'verified', text: '2 disk(s), 3 GB erased, attested by the ramdisk' },
    ]);
  });

  it('reads a written image’s digest and read-back, an agent’s join, and nothing from other shapes', () => {
    expect(stepOutputFacts({ disk: '/dev/vda', source: 'http://x', bytesWritten: 52_428_800, sha256: 'ab'.repeat(32), verified: true })).toEqual([
      { kind: 'image', text: `Image sha256:${'ab'.repeat(32)} on /dev/vda` },
      { kind: 'verified', text: '52.4 MB written, read back and verified' },
    ]);
    expect(stepOutputFacts({ action: 'cycle', before: 'On', after: 'On', resetTypes: ['PowerCycle'] })).toEqual([
      { kind: 'power', text: 'Power On → On (cycle)' },
    ]);
    expect(stepOutputFacts({ powerState: 'Off' })).toEqual([{ kind: 'power', text: 'Power read: Off' }]);
    expect(stepOutputFacts({ agentId: 'ramdisk-7' })).toEqual([{ kind: 'agent', text: 'Agent ramdisk-7 joined' }]);
    expect(stepOutputFacts({ bytesWritten: -1, sha256: 'x' })).toEqual([]);
    expect(stepOutputFacts(null)).toEqual([]);
    expect(stepOutputFacts([1, 2])).toEqual([]);
  });
});
