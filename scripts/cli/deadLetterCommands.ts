import type { Command } from 'commander';
import type { DeadLetterPage } from '../../schemas/deadLetters.ts';
import type { ApiClient } from './apiClient.ts';
import { table } from './format.ts';

type Output = (value: unknown, human: () => string) => void;

/** `dead-letters ls|purge`: messages consumers quarantined instead of acting on them. */
export function addDeadLetterCommands(program: Command, api: () => ApiClient, print: Output): void {
  const deadLetters = program.command('dead-letters').description('messages consumers set aside (not written by the event store, or unreadable)');
  deadLetters
    .command('ls')
    .description('list quarantined messages, oldest first')
    .option('--consumer <name>', 'only this consumer, e.g. projectors')
    .option('--after <seq>', 'continue after this entry', '0')
    .option('--limit <n>', 'page size', '100')
    .action(async (o: { consumer?: string; after: string; limit: string }) => {
      const q = new URLSearchParams({ afterSeq: o.after, limit: o.limit, ...(o.consumer ? { consumer: o.consumer } : {}) });
      const page = await api().get<DeadLetterPage>(`/v1/dead-letters?${q}`);
      print(
        page,
        () =>
          table(page.items, ['seq', 'consumer', 'stream', 'streamSeq', 'subject', 'reason', 'detail', 'quarantinedAt']) +
          (page.nextAfterSeq ? `\n(more: --after ${page.nextAfterSeq})` : ''),
      );
    });
  deadLetters
    .command('purge')
    .description('clear quarantined messages once handled (the originals stay in their stream)')
    .option('--consumer <name>', 'only this consumer')
    .action(async (o: { consumer?: string }) => {
      const result = await api().call<{ purged: number }>('DELETE', `/v1/dead-letters${o.consumer ? `?consumer=${encodeURIComponent(o.consumer)}` : ''}`);
      print(result, () => `purged ${result.purged} dead letter(s)`);
    });
}
