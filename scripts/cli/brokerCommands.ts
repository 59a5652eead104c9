import { resolve, join } from 'node:path';
import type { Command } from 'commander';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { writeServerConfig, type ClusterRoutes } from '../../services/trust/broker/serverConfig.ts';
import { issueJoinCredentials } from '../../services/trust/broker/userCredentials.ts';
import { addInspectorCredsCommand } from './inspect/inspectorCredsCommand.ts';

type Output = (value: unknown, human: () => string) => void;

const hostPort = (value: string, flag: string): [string, number] => {
  const [host, port] = [value.slice(0, value.lastIndexOf(':')), Number(value.slice(value.lastIndexOf(':') + 1))];
  if (!host || !Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`${flag} ${value} is not host:port`);
  return [host, port];
};

/** The cluster block of `broker init`: all of --cluster-listen, --routes and --server-name, or none of them. */
function clusterOption(o: { serverName?: string; clusterListen?: string; routes?: string; clusterName: string }): ClusterRoutes | undefined {
  if (o.clusterListen === undefined && o.routes === undefined) return undefined;
  if (o.clusterListen === undefined || o.routes === undefined || o.serverName === undefined)
    throw new Error('a cluster node needs --cluster-listen, --routes and --server-name together');
  const [host, port] = hostPort(o.clusterListen, '--cluster-listen');
  const routes = o.routes
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
  for (const route of routes) if (!/^nats-route:\/\/[^:/]+:\d+$/.test(route)) throw new Error(`--routes: ${route} is not nats-route://host:port`);
  return { name: o.clusterName, host, port, routes };
}

/** `broker init`: the trust chain and server config for running the stack on a NATS server of your own. */
export function addBrokerCommands(program: Command, print: Output): void {
  const broker = program.command('broker').description('the NATS trust chain (operator mode) the stack runs under');
  broker
    .command('init')
    .description(
      'create the trust chain (if missing) and write an operator-mode nats-server config that trusts it; run your server with it, then start the stack with BC_NATS_URL and BC_BROKER_DIR',
    )
    .option('--broker-dir <dir>', 'where the trust chain lives (default: BC_BROKER_DIR, else <BC_DATA_DIR>/broker); keep it private, like the master key')
    .requiredOption('--store-dir <dir>', "the server's JetStream store directory")
    .option('--listen <host:port>', 'what the server listens on', '127.0.0.1:4222')
    .option('--server-name <name>', 'server_name (needed once servers cluster)')
    .option('--cluster-listen <host:port>', "this node's route listener: makes the config a cluster node (with --routes and --server-name)")
    .option('--routes <urls>', "the other nodes' route urls, comma-separated (nats-route://host:port)")
    .option('--cluster-name <name>', 'the cluster name, the same on every node', 'bc')
    .requiredOption('--out <file>', 'where to write the nats-server config (mode 0600)')
    .action(
      async (o: {
        brokerDir?: string;
        storeDir: string;
        listen: string;
        serverName?: string;
        clusterListen?: string;
        routes?: string;
        clusterName: string;
        out: string;
      }) => {
        const dir = resolve(o.brokerDir ?? process.env.BC_BROKER_DIR ?? join(process.env.BC_DATA_DIR ?? './.data', 'broker'));
        const [host, port] = [o.listen.slice(0, o.listen.lastIndexOf(':')), Number(o.listen.slice(o.listen.lastIndexOf(':') + 1))];
        if (!host || !Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`--listen ${o.listen} is not host:port`);
        const cluster = clusterOption(o);
        const maxBytes = process.env.BC_JETSTREAM_MAX_BYTES ? Number(process.env.BC_JETSTREAM_MAX_BYTES) : -1;
        if (!Number.isInteger(maxBytes) || maxBytes === 0 || maxBytes < -1) throw new Error('BC_JETSTREAM_MAX_BYTES must be a positive number of bytes');
        // The account's JetStream storage limit goes into the config the server starts from.
        const material = await loadOrCreateBrokerMaterial(dir, { jetStream: { diskStorage: maxBytes } });
        await issueJoinCredentials(material);
        const file = writeServerConfig(resolve(o.out), material, {
          host,
          port,
          storeDir: resolve(o.storeDir),
          resolverDir: join(dir, 'resolver'),
          ...(o.serverName ? { serverName: o.serverName } : {}),
          ...(cluster ? { cluster } : {}),
        });
        print({ brokerDir: dir, config: file, operator: material.operatorPublicKey, account: material.appAccount.publicKey }, () =>
          [
            `trust chain in ${dir} (operator ${material.operatorPublicKey})`,
            `server config written to ${file}; run: nats-server -c ${file}`,
            cluster
              ? `do the same on every node (same --broker-dir contents, its own --server-name and --cluster-listen), then: BC_NATS_URL=<every node's nats://host:port, comma-separated> BC_STREAM_REPLICAS=3 BC_BROKER_DIR=${dir} npm start`
              : `then: BC_NATS_URL=nats://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port} BC_BROKER_DIR=${dir} npm start`,
          ].join('\n'),
        );
      },
    );
  addInspectorCredsCommand(broker, print);
}
