import { loadConfig } from '../platform/config.ts';
import { usePrivateUmask } from '../platform/privateTree.ts';
import { allCommands } from '../api/commandCatalog.ts';
import { openRuntime } from './runtime.ts';
import { serviceCatalog, type RunningService } from './serviceCatalog.ts';

/**
 * Runs the named services in this process: `tsx services/stack/serve.ts api commands projector:nodes`.
 * Stops them cleanly on SIGINT/SIGTERM.
 */
const names = process.argv.slice(2);
const unknown = names.filter((n) => !serviceCatalog[n]);
if (names.length === 0 || unknown.length > 0) {
  console.error(`usage: serve <service...>; unknown: ${unknown.join(', ') || '(none given)'}; known: ${Object.keys(serviceCatalog).join(', ')}`);
  process.exit(2);
}
// What the services create (read models, their -wal/-shm) is the owner's only, however the process was started.
usePrivateUmask();
// The services of one process share its bus; between them (api, commands) they decide every command.
const runtime = await openRuntime(loadConfig(), names.join('+'), allCommands);
const running: RunningService[] = [];
for (const name of names) running.push(await serviceCatalog[name]!(runtime));
// The services' subscriptions are queued on the connection, not yet at the server: "started" promises they are served.
await runtime.nc.flush();
runtime.log.info({ services: names }, 'services started');
// A service that stopped working leaves nothing useful running: exit, so the supervisor starts a fresh process.
for (const [i, service] of running.entries()) {
  void service.failure?.then((err) => {
    if (stopping) return;
    runtime.log.fatal({ err, service: names[i] }, 'service failed; exiting');
    process.exit(1);
  });
}

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  runtime.log.info({ signal }, 'stopping');
  for (const s of running.reverse()) await s.stop().catch((err: unknown) => runtime.log.error({ err }, 'stop failed'));
  await runtime.nc.drain().catch(() => undefined);
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
// Started by the supervisor: stop when it goes away, so a killed `npm start` leaves no services behind.
if (process.connected) process.on('disconnect', () => void shutdown('supervisor exited'));
