import type { Command } from 'commander';
import type { ApiClient } from './apiClient.ts';
import { CliError } from './cliError.ts';

type Output = (value: unknown, human: () => string) => void;

/**
 * `key=value` sets a label, `key-` removes one (kubectl's spelling), as one `metal.setLabels`. The keys and values
 * themselves are the API's to judge: a bad one comes back as its `VALIDATION_FAILED` or `LABEL_RESERVED`.
 */
export function labelChangesOf(terms: readonly string[]): { set: Record<string, string>; remove: string[] } {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const term of terms) {
    const equals = term.indexOf('=');
    if (equals > 0) set[term.slice(0, equals)] = term.slice(equals + 1);
    else if (equals < 0 && term.length > 1 && term.endsWith('-')) remove.push(term.slice(0, -1));
    else throw new CliError('VALIDATION_FAILED', `${JSON.stringify(term)}: expected key=value (set) or key- (remove)`);
  }
  return { set, remove };
}

/** `nodes label <nodeId> key=value … key-`: set and remove a node's own labels in one command. */
export function addNodeLabelCommand(nodes: Command, api: () => ApiClient, print: Output): void {
  nodes
    .command('label <nodeId> <changes...>')
    .description("set (key=value) and remove (key-) a node's labels; bc.dev/ labels are derived and cannot be set")
    .action(async (nodeId: string, changes: string[]) => {
      const result = await api().command<{ seq: number; events: unknown[] }>('metal.setLabels', { nodeId, ...labelChangesOf(changes) });
      print(result, () => (result.events.length > 0 ? `labels of ${nodeId} changed (seq ${result.seq})` : `labels of ${nodeId} unchanged`));
    });
}
