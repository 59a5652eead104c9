import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../schemas/envelope.ts';
import { rememberedAnswer, storedAnswer } from '../../services/platform/commands/duplicateResolution.ts';
import type { AppliedCommand } from '../../services/platform/commands/rememberedCommands.ts';
import type { LogEntry } from '../../services/platform/eventStore/eventStore.ts';
import { siteEventMetadata } from '../support/commandPayloads.ts';

const subject = 'bc.events.site.site.dc1';
const created = { type: 'SiteCreated', version: 1, data: { siteId: 'dc1', name: 'DC1' } };
const applied = (requestDigest?: string): AppliedCommand => ({ seq: 7, events: [created], commandName: 'site.create', requestDigest });

/** A store whose only message, at sequence 7, is `entry`. */
const storeHolding = (entry: LogEntry | undefined) => ({ readAt: async (seq: number) => (seq === 7 ? entry : undefined) });
const batchOf = (commandName: string, requestDigest?: string): EventBatch => ({
  events: [{ ...created, metadata: { ...siteEventMetadata('c-000001', 'dc1'), commandName, ...(requestDigest ? { requestDigest } : {}) } }],
});
const stored = (batch: EventBatch, at = subject): LogEntry => ({ seq: 7, subject: at, messageId: 'c-000001', batch });

describe('duplicate resolution: a command id seen before', () => {
  it('given a state that does not remember the id, then there is no answer: the command is decided', () => {
    expect(rememberedAnswer('c-000001', undefined, { commandName: 'site.create', requestDigest: undefined })).toBeUndefined();
  });

  it('given a remembered id of the same command, then its original result is the answer', () => {
    expect(rememberedAnswer('c-000001', applied(), { commandName: 'site.create', requestDigest: undefined })).toEqual({ seq: 7, events: [created] });
    expect(rememberedAnswer('c-000001', applied('d1'), { commandName: 'site.create', requestDigest: 'd1' })).toEqual({ seq: 7, events: [created] });
  });

  it('given a remembered id of another command, then the key was reused: IDEMPOTENCY_KEY_REUSED', () => {
    expect(() => rememberedAnswer('c-000001', applied(), { commandName: 'site.delete', requestDigest: undefined })).toThrow(
      expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REUSED', message: expect.stringContaining('was used for site.create, not site.delete') }),
    );
  });

  it('given a remembered keyed request with another body, then the key was reused: IDEMPOTENCY_KEY_REUSED', () => {
    expect(() => rememberedAnswer('c-000001', applied('d1'), { commandName: 'site.create', requestDigest: 'd2' })).toThrow(
      expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REUSED', message: expect.stringContaining('with another body') }),
    );
  });

  it('given an append deduplicated by JetStream, when the stored message is this command, then what was stored is the answer', async () => {
    const answer = await storedAnswer(storeHolding(stored(batchOf('site.create', 'd1'))), 7, subject, 'c-000001', {
      commandName: 'site.create',
      requestDigest: 'd1',
    });
    expect(answer).toEqual({ seq: 7, events: [created] });
  });

  it('given an append deduplicated by JetStream, when the id was stored on another aggregate, then the key was reused', async () => {
    const elsewhere = storeHolding(stored(batchOf('site.create'), 'bc.events.site.site.dc2'));
    await expect(storedAnswer(elsewhere, 7, subject, 'c-000001', { commandName: 'site.create', requestDigest: undefined })).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      message: expect.stringContaining('another aggregate'),
    });
  });

  it('given an append deduplicated by JetStream, when the stored message is unreadable or gone, then the key counts as reused', async () => {
    const rejected: LogEntry = { seq: 7, subject, messageId: 'c-000001', rejection: { reason: 'not written by the event store' } as never };
    for (const store of [storeHolding(rejected), storeHolding(undefined)]) {
      await expect(storedAnswer(store, 7, subject, 'c-000001', { commandName: 'site.create', requestDigest: undefined })).rejects.toMatchObject({
        code: 'IDEMPOTENCY_KEY_REUSED',
      });
    }
  });

  it('given an append deduplicated by JetStream, when the stored message is another command or body, then the key was reused', async () => {
    const other = storeHolding(stored(batchOf('site.delete')));
    await expect(storedAnswer(other, 7, subject, 'c-000001', { commandName: 'site.create', requestDigest: undefined })).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
    const body = storeHolding(stored(batchOf('site.create', 'd1')));
    await expect(storedAnswer(body, 7, subject, 'c-000001', { commandName: 'site.create', requestDigest: 'd2' })).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
  });
});
