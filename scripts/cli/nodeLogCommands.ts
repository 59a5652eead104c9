import type { Command } from 'commander';
import type { NodeLogEntry, NodeLogPage } from '../../schemas/agent/nodeLog.ts';
import type { ApiClient } from './apiClient.ts';
import { CliError } from './cliError.ts';

type Output = (value: unknown, human: () => string) => void;

/** One line as a terminal shows it: when, who, which stream (progress marked), what. */
export function formatLogLine(entry: NodeLogEntry): string {
  const stream = entry.stream === 'stdout' ? '' : ` ${entry.stream}`;
  return `${entry.at} ${entry.source}${stream}: ${entry.text}`;
}

/**
 * `nodes logs <nodeId> [--since <seq>] [--follow]`: the node's agents' step output and serial console. `--follow`
 * keeps printing lines as they are stored until interrupted (or the API ends the stream: a revoked token).
 */
export function addNodeLogCommand(nodes: Command, api: () => ApiClient, print: Output, json: () => boolean): void {
  nodes
    .command('logs <nodeId>')
    .description("a node's log: its site agent's, ramdisk's and node agent's step output and serial console lines")
    .option('--since <seq>', 'lines after this sequence (default: the newest --limit lines)')
    .option('--limit <n>', 'lines at most (default 500)')
    .option('-f, --follow', 'keep printing new lines as they are stored')
    .action(async (nodeId: string, options: { since?: string; limit?: string; follow?: boolean }) => {
      const query = new URLSearchParams();
      if (options.since !== undefined) query.set('since', options.since);
      if (options.limit !== undefined) query.set('limit', options.limit);
      const path = `/v1/nodes/${encodeURIComponent(nodeId)}/logs`;
      if (!options.follow) {
        const page = await api().get<NodeLogPage>(`${path}?${query.toString()}`);
        print(page, () => page.items.map(formatLogLine).join('\n'));
        return;
      }
      query.set('follow', '1');
      for await (const frame of api().events(`${path}?${query.toString()}`)) {
        if (frame.event === 'line') console.log(json() ? JSON.stringify(frame.data) : formatLogLine(frame.data as NodeLogEntry));
        if (frame.event === 'end') throw new CliError('UNAUTHENTICATED', `the API ended the stream: ${JSON.stringify(frame.data)}`);
      }
    });
}
