import { readFile } from 'node:fs/promises';
import { expect } from 'vitest';
import { providerConformanceCases, runConformance, type ConformanceReport, type ConformanceSubject } from 'better-compute/sdk';
import { loadRecording, recordingFetch, replayingFetch } from './record-replay.ts';

/**
 * Walkthrough 2's proof for a provider behind HTTP: the conformance suite against the cloud's emulator with every
 * exchange recorded, the emulator closed, then the suite again offline from the recording alone, which must be used up
 * and must not hold the account's secret. Answers the live report and the replayer for a test's own checks.
 */
export async function conformanceLiveThenReplayed(options: {
  /** The subject the suite drives, over the given transport. */
  subject: (fetch: typeof globalThis.fetch) => ConformanceSubject;
  /** Closes the emulator once the live run is over (the offline run must not reach it). */
  close: () => Promise<void>;
  recordingFile: string;
  /** What the recording must never contain (the token, or its secret part). */
  secret: string;
}): Promise<{ live: ConformanceReport; replay: ReturnType<typeof replayingFetch> }> {
  const recorder = recordingFetch(globalThis.fetch);
  const subject = options.subject(recorder.fetch);
  let live: ConformanceReport;
  try {
    live = await runConformance(providerConformanceCases(), subject);
  } finally {
    await options.close();
  }
  expect(live.cases.filter((c) => !c.ok)).toEqual([]);
  expect(live.cases).toHaveLength(providerConformanceCases().length);

  await recorder.save(options.recordingFile);
  expect(await readFile(options.recordingFile, 'utf8')).not.toContain(options.secret);
  const replay = replayingFetch(await loadRecording(options.recordingFile));
  const offline = await runConformance(providerConformanceCases(), { ...subject, fetch: replay.fetch, pollIntervalMs: 0 });
  expect(offline.cases.filter((c) => !c.ok)).toEqual([]);
  expect(replay.remaining()).toBe(0);
  return { live, replay };
}
