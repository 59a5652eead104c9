import { createHash } from 'node:crypto';

const digest = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);

/**
 * The id of the decision aggregate of one natural key in one category: derived, so every sensor pass and every
 * engine replica names the same subject (`bc.evt.autonomy.decision.<id>`) and optimistic concurrency on that one
 * subject refuses a second request for the same key.
 */
export const decisionIdOf = (category: string, key: string) => `dec-${digest(`${category}\n${key}`, 24)}`;

/**
 * The budget aggregate of one scope (`bc.evt.autonomy.budget.<id>`): one per scope, so every use of it is decided on
 * one subject and a sliding window sees them all. (Before issue 31 there was one per scope and fixed window.)
 */
export const budgetIdOf = (scope: string) => `bud-${digest(`${scope}\nsliding`, 24)}`;

/** A command id derived from what it answers (decision, episode, step): replicas and retries send the same one. */
export const autonomyCommandId = (prefix: string, ...parts: readonly (string | number)[]) => `${prefix}-${digest(parts.join('\n'), 32)}`;

/** The singleton controls aggregate: policy overrides, paused owners, the halt switch. */
export const CONTROLS_ID = 'fleet';
