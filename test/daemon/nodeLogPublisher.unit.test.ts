import { describe, expect, test } from 'vitest';
import { capLogText, NODE_LOG_TEXT_MAX, NodeLogLine, withoutUrls } from '../../schemas/agent/nodeLog.ts';
import { NodeLogPublisher } from '../../daemon/agent/nodeLogPublisher.ts';

/** A publisher on a hand-driven clock, collecting what it sends. */
function harness(budget: ConstructorParameters<typeof NodeLogPublisher>[3] = {}) {
  let clock = 1_000_000;
  const sent: { subject: string; line: NodeLogLine }[] = [];
  const publisher = new NodeLogPublisher(
    (subject, data) => sent.push({ subject, line: NodeLogLine.parse(JSON.parse(data)) }),
    'dc1',
    'ramdisk',
    { flushMs: 60_000, ...budget },
    () => clock,
  );
  return {
    publisher,
    sent,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

describe('node log lines', () => {
  test('text is capped, saying so, and a line longer than the cap does not parse', () => {
    const long = 'a'.repeat(NODE_LOG_TEXT_MAX + 50);
    expect(capLogText(long)).toHaveLength(NODE_LOG_TEXT_MAX);
    expect(capLogText(long).endsWith('[cut]')).toBe(true);
    expect(capLogText('short')).toBe('short');
    const line = { nodeId: 'n1', source: 'ramdisk', stream: 'stdout', at: new Date().toISOString() };
    expect(NodeLogLine.safeParse({ ...line, text: long }).success).toBe(false);
    expect(NodeLogLine.safeParse({ ...line, text: 'ok' }).success).toBe(true);
    expect(NodeLogLine.safeParse({ ...line, source: 'bmc', text: 'ok' }).success).toBe(false);
  });

  test('URLs (blob capabilities, tokens in image URLs, BMC passwords) never leave an agent', () => {
    expect(withoutUrls('fetching https://u:pw@cache:8080/images/abc?token=s3cr3t answered 404')).toBe('fetching <url> answered 404');
    const { publisher, sent } = harness();
    publisher.say({ nodeId: 'n1', stream: 'stderr', text: 'GET http://10.0.0.1/v1/blobs/cap-XYZ failed' });
    publisher.flush();
    expect(sent.map((s) => s.line.text)).toEqual(['GET <url> failed']);
  });

  test('each line goes to its own node subject under the publisher source, tagged with its command', () => {
    const { publisher, sent } = harness();
    publisher.say({ nodeId: 'n1', commandId: 'c-1', stream: 'stdout', text: 'one' });
    publisher.say({ nodeId: 'n2', stream: 'stderr', text: 'two' });
    expect(sent).toEqual([]);
    publisher.flush();
    expect(sent.map((s) => [s.subject, s.line.source, s.line.commandId, s.line.text])).toEqual([
      ['bc.site.dc1.log.n1.ramdisk', 'ramdisk', 'c-1', 'one'],
      ['bc.site.dc1.log.n2.ramdisk', 'ramdisk', undefined, 'two'],
    ]);
  });

  test('a chatty command is held to the rate: burst, then lines per second; excess output is dropped and counted', () => {
    const { publisher, sent, advance } = harness({ linesPerSecond: 10, burst: 10, queueMax: 20 });
    for (let i = 0; i < 100; i++) publisher.say({ nodeId: 'n1', commandId: 'c-1', stream: 'stdout', text: `line ${i}` });
    publisher.flush();
    expect(sent).toHaveLength(10);
    expect(publisher.backlog).toEqual({ queued: 10, dropped: 80 });
    // Flushing again at once sends nothing: no token came back.
    publisher.flush();
    expect(sent).toHaveLength(10);
    advance(1_000);
    publisher.flush();
    expect(sent.map((s) => s.line.text)).toEqual([...Array(20).keys()].map((i) => `line ${i}`));
    advance(1_000);
    publisher.flush();
    // The count of what was lost follows the lines that were waiting before it.
    expect(sent).toHaveLength(21);
    expect(sent[20]!.line).toMatchObject({ stream: 'stderr', text: '[80 lines dropped: over the log rate limit]', commandId: 'c-1' });
    expect(publisher.backlog).toEqual({ queued: 0, dropped: 0 });
  });

  test('under the budget every progress line leaves, one phase after another', () => {
    const { publisher, sent } = harness();
    publisher.say({ nodeId: 'n1', commandId: 'c-1', stream: 'progress', text: 'zero: 100%' });
    publisher.say({ nodeId: 'n1', commandId: 'c-1', stream: 'progress', text: 'verify: 100%' });
    publisher.flush();
    expect(sent.map((s) => s.line.text)).toEqual(['zero: 100%', 'verify: 100%']);
  });

  test('progress over the budget keeps only the latest line of each command', () => {
    const { publisher, sent, advance } = harness({ linesPerSecond: 1, burst: 1 });
    publisher.say({ nodeId: 'n1', commandId: 'c-1', stream: 'stdout', text: 'start' });
    publisher.flush();
    for (let p = 1; p <= 50; p++) publisher.say({ nodeId: 'n1', commandId: 'c-1', stream: 'progress', text: `${p}%` });
    publisher.say({ nodeId: 'n2', commandId: 'c-2', stream: 'progress', text: 'other 7%' });
    expect(publisher.backlog.queued).toBe(2);
    advance(2_000);
    publisher.flush();
    expect(sent.map((s) => s.line.text)).toEqual(['start', '50%']);
    advance(1_000);
    publisher.flush();
    expect(sent.map((s) => s.line.text)).toEqual(['start', '50%', 'other 7%']);
  });

  test('a publish that throws (connection closed) does not reach the work that printed', () => {
    const publisher = new NodeLogPublisher(
      () => {
        throw new Error('closed');
      },
      'dc1',
      'site-agent',
    );
    publisher.say({ nodeId: 'n1', stream: 'stdout', text: 'x' });
    expect(() => publisher.close()).not.toThrow();
  });
});
