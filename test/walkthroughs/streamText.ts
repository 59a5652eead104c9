import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** Every message of a stream as text (payload and headers), oldest first: what a `nats sub` replay would show. */
export async function streamTexts(nc: NatsConnection, stream: string): Promise<{ subject: string; data: string; text: string }[]> {
  const consumer = await jetstream(nc).consumers.get(stream);
  const texts: { subject: string; data: string; text: string }[] = [];
  const messages = await consumer.consume();
  try {
    for await (const m of messages) {
      texts.push({ subject: m.subject, data: m.string(), text: `${m.headers?.toString() ?? ''}\n${m.string()}` });
      if (m.info.pending === 0) break;
    }
  } finally {
    await messages.close();
  }
  return texts;
}
