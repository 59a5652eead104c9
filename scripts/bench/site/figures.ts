/** One in-boot sample of `scripts/emulatedSite/ramdiskBench.ts` (a `bc-bench: {json}` serial line), in seconds. */
export interface BootSample {
  sample: number;
  disk: string;
  imageBytes: number;
  diskBytes: number;
  fetchSeconds: number;
  sha256Seconds: number;
  ddWrite: number;
  bcdWrite: number;
  bcdImageLocal: number;
  ddWipe: number;
  bcdWipe: number;
}

/** A workflow step as the workflows read model keeps it. */
export interface StepRow {
  nodeId: string;
  operation: string;
  stepId: string;
  startedAt: string;
  endedAt: string;
  output: string | null;
}

/** Every `bc-bench:` line of a serial log, parsed (a line cut off mid-write is skipped). */
export function bootSamples(serial: string): BootSample[] {
  return [...serial.matchAll(/^bc-bench: (\{.*\})\s*$/gm)].flatMap((m) => {
    try {
      return [JSON.parse(m[1]!) as BootSample];
    } catch {
      return [];
    }
  });
}

export const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
export const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const mbps = (bytes: number, seconds: number) => bytes / seconds / 1e6;
const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

/** Median MB/s of a series, its samples, and its ratio to the dd median of the same bytes. */
function figure(rates: number[], ddMedian: number, note: string) {
  return { medianMBps: round(median(rates)), ratioToDd: round(median(rates) / ddMedian), samplesMBps: rates.map((r) => round(r)), note };
}

/**
 * The bench's comparison, like for like: each project figure beside `dd` moving the same bytes to the same device in
 * the same boot (in-boot samples), and the real workflow steps (`image.write` with its network fetch, `disk.wipe`)
 * beside the dd of the same boots.
 */
export function siteFigures(samples: readonly BootSample[], steps: readonly StepRow[]) {
  const image = (s: BootSample) => s.imageBytes;
  const ddWrite = samples.map((s) => mbps(image(s), s.ddWrite));
  const ddWipe = samples.map((s) => mbps(s.diskBytes, s.ddWipe));
  const ddWriteMedian = median(ddWrite);
  const ddWipeMedian = median(ddWipe);
  const imageSteps = steps.filter((s) => s.stepId === 'image.write' && s.output);
  const wipeSteps = steps.filter((s) => s.stepId === 'disk.wipe' && s.output);
  return {
    imageWrite: {
      ddMBps: { median: round(ddWriteMedian), samples: ddWrite.map((r) => round(r)), note: 'dd of the image from tmpfs, bs=1M, conv=fsync' },
      withFetch: figure(
        imageSteps.map((s) => {
          const out = JSON.parse(s.output!) as { bytesWritten: number };
          return mbps(out.bytesWritten, seconds(s.startedAt, s.endedAt));
        }),
        ddWriteMedian,
        'the image.write step: fetch from the site cache over the VM NIC + write + fsync + read-back sha256, plus the step round trip',
      ),
      withoutFetch: figure(
        samples.map((s) => mbps(image(s), s.bcdImageLocal)),
        ddWriteMedian,
        "bcd's writeImage from loopback HTTP (no network): streaming sha256 + write + fsync + drop cache + read-back sha256",
      ),
      withoutFetchOrHash: figure(
        samples.map((s) => mbps(image(s), s.bcdWrite)),
        ddWriteMedian,
        "bcd's batched writer of the same bytes from tmpfs + fsync: what dd does",
      ),
      guestSha256MBps: {
        median: round(median(samples.map((s) => mbps(image(s), s.sha256Seconds)))),
        note: 'one sha256 pass over the image in guest memory: writeImage makes two (stream + read-back)',
      },
      fetchMBps: { median: round(median(samples.map((s) => mbps(image(s), s.fetchSeconds)))), note: 'the image over the site network into tmpfs' },
    },
    wipe: {
      ddMBps: { median: round(ddWipeMedian), samples: ddWipe.map((r) => round(r)), note: 'dd of zeros over the disk + fsync, then dd reading it all back' },
      inBoot: figure(
        samples.map((s) => mbps(s.diskBytes, s.bcdWipe)),
        ddWipeMedian,
        "bcd's wipeDisk(zero) in the same boot: zeros + fsync + drop cache + verifying read",
      ),
      step: figure(
        wipeSteps.map((s) => {
          const out = JSON.parse(s.output!) as { disks: { sizeBytes: number }[] };
          return mbps(
            out.disks.reduce((n, d) => n + d.sizeBytes, 0),
            seconds(s.startedAt, s.endedAt),
          );
        }),
        ddWipeMedian,
        'the disk.wipe step (the same wipe) plus the step round trip',
      ),
    },
  };
}
