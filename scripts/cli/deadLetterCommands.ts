import type { Command } from 'commander';
import type { DeadLetterPage } from '../../schemas/deadLetters.ts';
import type { ApiClient } from './apiClient.ts';
import { table } from './format.ts';

type Output = (value: unknown, human: () => string) => void;

/** `dead-letters ls|handle`: messages consumers quarantined instead of acting on them. */
export function addDeadLetterCommands(program: Command, api: () => ApiClient, print: Output): void {
  const deadLetters = program.command('dead-letters').description('messages consumers set aside (not written by the event store, or unreadable)');
  deadLetters
    .command('ls')
    .description('list quarantined messages, oldest first (open ones; --handled: those marked handled)')
    .option('--consumer <name>', 'only this consumer, e.g. projectors')
    .option('--handled', 'list the entries marked handled, with who and when')
    .option('--after <seq>', 'continue after this entry', '0')
    .option('--limit <n>', 'page size', '100')
    .action(async (o: { consumer?: string; handled?: boolean; after: string; limit: string }) => {
      const q = new URLSearchParams({
        afterSeq: o.after,
        limit: o.limit,
        ...(o.consumer ? { consumer: o.consumer } : {}),
        ...(o.handled ? { handled: 'true' } : {}),
      });
      const page = await api().get<DeadLetterPage>(`/v1/dead-letters?${q.toString()}`);
      const rows = page.items.map((d) => ({ ...d, handledBy: d.handled?.by ?? '', handledAt: d.handled?.at ?? '' }));
      const columns = ['seq', 'consumer', 'stream', 'streamSeq', 'subject', 'reason', 'detail', 'quarantinedAt'];
      print(
        page,
        () => table(rows, o.handled ? [...columns, 'handledBy', 'handledAt'] : columns) + (page.nextAfterSeq ? `\n(more: --after ${page.nextAfterSeq})` : ''),
      );
    });
  deadLetters
    .command('handle')
    .description('mark quarantined messages handled: they leave the open list and the counts, and are kept with who and when')
    .option('--consumer <name>', 'only this consumer')
    .action(async (o: { consumer?: string }) => {
      const result = await api().call<{ handled: number }>('POST', `/v1/dead-letters/handle${o.consumer ? `?consumer=${encodeURIComponent(o.consumer)}` : ''}`);
      print(result, () => `marked ${result.handled} dead letter(s) handled`);
    });
}
