import { JetStreamApiError } from '@nats-io/jetstream';

/** JetStream API error for a failed `Nats-Expected-Last-Subject-Sequence` check: the subject moved on. */
export const WRONG_LAST_SEQUENCE = 10071;

/** A publish refused because its subject no longer ends where the writer expected (a compare-and-set lost). */
export const isWrongLastSequence = (err: unknown): boolean => err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE;
