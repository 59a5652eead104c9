import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { EventHeaders, EventMac, loadEventMac } from '../../services/platform/eventStore/eventMac.ts';
import { tempDir } from '../support/natsServer.ts';

const payload = new TextEncoder().encode('{"events":[]}');
const subject = 'bc.evt.metal.node.n1';

/** The headers a stored message carries when the event store appended it. */
function stored(mac: EventMac, options: { subject?: string; expectedSeq?: number; commandId?: string } = {}) {
  const messageId = mac.messageId(options.commandId ?? 'cmd-00000001');
  const expectedSeq = options.expectedSeq ?? 7;
  const h = headers();
  h.set(EventHeaders.messageId, messageId);
  h.set(EventHeaders.expectedSeq, String(expectedSeq));
  h.set(EventHeaders.mac, mac.sign(options.subject ?? subject, messageId, expectedSeq, payload));
  return h;
}

describe('EventMac', () => {
  const mac = new EventMac(randomBytes(32));

  it('EventMac accepts what it signed', () => {
    expect(mac.verify(subject, stored(mac), payload)).toBeUndefined();
  });

  it('EventMac refuses a message without a MAC as MAC_MISSING', () => {
    expect(mac.verify(subject, undefined, payload)).toMatchObject({ reason: 'MAC_MISSING' });
    expect(mac.verify(subject, headers(), payload)).toMatchObject({ reason: 'MAC_MISSING' });
  });

  it('EventMac refuses a batch altered, moved to another subject, or stored at another expected sequence', () => {
    expect(mac.verify(subject, stored(mac), new TextEncoder().encode('{"events":[1]}'))).toMatchObject({ reason: 'MAC_INVALID' });
    expect(mac.verify('bc.evt.metal.node.n2', stored(mac), payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const moved = stored(mac);
    moved.set(EventHeaders.expectedSeq, '8');
    expect(mac.verify(subject, moved, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const renamed = stored(mac);
    renamed.set(EventHeaders.messageId, mac.messageId('cmd-00000002'));
    expect(mac.verify(subject, renamed, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const stripped = stored(mac);
    stripped.delete(EventHeaders.expectedSeq);
    expect(mac.verify(subject, stripped, payload)).toMatchObject({ reason: 'MAC_INVALID' });
  });

  it('EventMac names both keys when a message was signed under another one', () => {
    const other = new EventMac(randomBytes(32));
    expect(mac.verify(subject, stored(other), payload)).toEqual({ reason: 'MAC_INVALID', detail: expect.stringContaining(other.keyId) });
  });

  it('EventMac keys message ids: the command id stays readable, the rest cannot be guessed without the key', () => {
    const other = new EventMac(randomBytes(32));
    expect(mac.messageId('cmd-00000001')).toMatch(/^cmd-00000001\.[A-Za-z0-9_-]{22}$/);
    expect(mac.messageId('cmd-00000001')).toBe(mac.messageId('cmd-00000001'));
    expect(mac.messageId('cmd-00000001')).not.toBe(other.messageId('cmd-00000001'));
  });
});

describe('event key', () => {
  it('loadEventMac creates <dataDir>/event.key (0600, apart from the master key) once, and every process loads the same key', () => {
    using dir = tempDir();
    const config = loadConfig({}, { dataDir: dir.path });
    const first = loadEventMac(config);
    expect(statSync(join(dir.path, 'event.key')).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dir.path, 'master.key'))).toBe(false);
    expect(loadEventMac(config).keyId).toBe(first.keyId);
  });

  it('loadEventMac takes BC_EVENT_KEY and refuses a malformed one with EVENT_KEY_INVALID, without quoting it', () => {
    using dir = tempDir();
    const bytes = randomBytes(32);
    expect(loadEventMac(loadConfig({ BC_EVENT_KEY: bytes.toString('base64') }, { dataDir: dir.path })).keyId).toBe(new EventMac(bytes).keyId);
    const bad = randomBytes(16).toString('base64');
    let thrown: unknown;
    try {
      loadEventMac(loadConfig({ BC_EVENT_KEY: bad }, { dataDir: dir.path }));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'EVENT_KEY_INVALID' });
    expect((thrown as Error).message).not.toContain(bad);
  });
});
