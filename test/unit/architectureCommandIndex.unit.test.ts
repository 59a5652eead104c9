import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { serviceCatalog } from '../../services/stack/serviceCatalog.ts';

/**
 * ARCHITECTURE.md's command index is what a newcomer reads to find where a command lives: every row is checked
 * against the command catalog, so a renamed decider, a new command or a changed exposure fails here, not in review.
 */
interface IndexRow {
  command: string;
  who: string;
  decider: string;
  events: string;
  readModel: string;
  route: string;
}

function commandIndexRows(): IndexRow[] {
  const text = readFileSync('ARCHITECTURE.md', 'utf8');
  const section = /^## Command index\n([\s\S]*?)^## /m.exec(text)?.[1];
  if (!section) throw new Error('ARCHITECTURE.md has no "## Command index" section');
  return section
    .split('\n')
    .filter((line) => /^\| `[^`]+` \|/.test(line))
    .map((line) => {
      const [command, who, decider, events, readModel, route] = line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim());
      return { command: command!.replaceAll('`', ''), who: who!, decider: decider!, events: events!, readModel: readModel!, route: route! };
    });
}

const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const httpSenders = new Set(['operator', 'tenant', 'admin']);
const rows = commandIndexRows();
const byName = new Map(allCommands.map((c) => [c.name, c]));

describe('ARCHITECTURE.md command index', () => {
  it('has one row per command of the catalog, and no other', () => {
    const names = rows.map((r) => r.command);
    expect(
      names.filter((name, i) => names.indexOf(name) !== i),
      'rows listed twice',
    ).toEqual([]);
    expect([...names].sort()).toEqual(allCommands.map((c) => c.name).sort());
  });

  it.each(rows.map((row) => [row.command, row] as const))('%s: exposure, decider, events, read model and route are true', async (name, row) => {
    const command = byName.get(name);
    if (!command) return; // reported by the row-set test above
    expect(new Set(row.who.split('/')), 'who (exposure)').toEqual(new Set(command.exposure));

    const deciderPath = backticked(row.decider)[0];
    expect(deciderPath && existsSync(deciderPath), `decider file ${deciderPath}`).toBe(true);
    const module = (await import(`../../${deciderPath}`)) as Record<string, unknown>;
    expect(Object.values(module), `${deciderPath} exports the catalog's ${name}`).toContain(command);

    const events = row.events.split(',').map((e) => e.trim().replaceAll('`', ''));
    expect(
      events.filter((type) => !command.aggregate.catalog.has(type)),
      `events not in the ${command.aggregate.module}.${command.aggregate.type} catalog`,
    ).toEqual([]);

    const folders = backticked(row.readModel);
    expect(row.readModel.startsWith('—') || folders.length > 0, 'read model: a folder, or — and why').toBe(true);
    expect(
      folders.filter((folder) => !existsSync(folder)),
      'read-model folders that do not exist',
    ).toEqual([]);

    const overHttp = command.exposure.some((sender) => httpSenders.has(sender));
    expect(row.route.includes(`POST /v1/commands/${name}`), 'route: POST /v1/commands/<name> exactly when exposed to operators, tenants or admins').toBe(
      overHttp,
    );
  });
});

describe('ARCHITECTURE.md first screen', () => {
  it('draws every process the stack can run', () => {
    const text = readFileSync('ARCHITECTURE.md', 'utf8');
    const diagram = /^## At a glance[\s\S]*?```\n([\s\S]*?)```/m.exec(text)?.[1] ?? '';
    // `projector:<model>` runs one read model apart from `projectors`: drawn as that model in the projectors' list.
    const drawn = (name: string) => new RegExp(`(^|[^a-z-])${name}([^a-z-]|$)`, 'm').test(diagram);
    expect(Object.keys(serviceCatalog).filter((service) => !drawn(service.replace(/^projector:/, '')))).toEqual([]);
  });
});
