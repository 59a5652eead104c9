import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Command } from 'commander';
import { Inboxes } from '../../../schemas/subjects.ts';
import { brokerDirOf, loadConfig, natsUrlOf } from '../../../services/platform/config.ts';
import { brokerConnectOptions } from '../../../services/platform/nats/brokerConnection.ts';
import { CliError } from '../cliError.ts';
import { decodeFleetMessage, fleetLine } from './fleetMessage.ts';

/**
 * Prints every message on `subject` as it arrives, like `nats sub`, decoded (`decodeFleetMessage`): one line each,
 * or one JSON object per line. Resolves after `count` messages, or when the subscription ends.
 */
export async function tailFleet(
  nc: NatsConnection,
  subject: string,
  options: { count?: number; json?: boolean; write?: (line: string) => void } = {},
): Promise<number> {
  const write = options.write ?? ((line: string) => console.log(line));
  const sub = nc.subscribe(subject, options.count ? { max: options.count } : {});
  let seen = 0;
  try {
    for await (const msg of sub) {
      const message = decodeFleetMessage(msg.subject, msg.data);
      write(options.json ? JSON.stringify(message) : fleetLine(message));
      seen++;
    }
  } catch (err) {
    throw new CliError('SUBSCRIPTION_REFUSED', `the server ended the subscription to ${subject}: ${(err as Error).message}`);
  }
  return seen;
}

/** The credential `tail` uses unless told: the inspector credential `npm start` wrote, in operator mode. */
function defaultCreds(): string | undefined {
  const config = loadConfig();
  return config.natsAuth === 'operator' ? join(brokerDirOf(config), 'creds', 'inspector.creds') : undefined;
}

/** `better-compute tail <subject>`: the fleet's story from its subjects, readable. */
export function addTailCommand(program: Command): void {
  program
    .command('tail <subject>')
    .description("print messages on a subject as they arrive, like nats sub, with agent results decoded to JSON (e.g. tail 'bc.>')")
    .option('--server <url>', 'the NATS server (default: BC_NATS_URL, else the one the running stack of this data dir recorded)')
    .option('--creds <file>', 'a .creds file (default in operator mode: the inspector credential npm start wrote, <broker dir>/creds/inspector.creds)')
    .option('--count <n>', 'stop after this many messages', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw new CliError('INVALID_COUNT', `--count ${v}: give a positive whole number`);
      return n;
    })
    .action(async (subject: string, o: { server?: string; creds?: string; count?: number }) => {
      const json = program.opts<{ json?: boolean }>().json === true;
      const server = o.server ?? natsUrlOf(loadConfig());
      const credsFile = o.creds ?? defaultCreds();
      if (credsFile !== undefined && !existsSync(credsFile))
        throw new CliError('CREDENTIALS_MISSING', `${credsFile} does not exist: better-compute broker creds --inspector issues one`);
      const nc = await connect({
        servers: server.split(','),
        name: 'better-compute-tail',
        ...(credsFile ? brokerConnectOptions({ creds: readFileSync(credsFile, 'utf8'), inboxPrefix: Inboxes.inspector }) : {}),
      }).catch((err: unknown) => {
        throw new CliError('NATS_UNREACHABLE', `cannot connect to ${server}: ${(err as Error).message}`);
      });
      const stop = () => void nc.drain();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        await tailFleet(nc, subject, { ...(o.count ? { count: o.count } : {}), json });
      } finally {
        if (!nc.isClosed()) await nc.close();
      }
    });
}
