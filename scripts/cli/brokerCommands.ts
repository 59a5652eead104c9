import { resolve, join } from 'node:path';
import type { Command } from 'commander';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { writeServerConfig } from '../../services/trust/broker/serverConfig.ts';
import { issueJoinCredentials } from '../../services/trust/broker/userCredentials.ts';

type Output = (value: unknown, human: () => string) => void;

/** `broker init`: the trust chain and server config for running the stack on a NATS server of your own. */
export function addBrokerCommands(program: Command, print: Output): void {
  const broker = program.command('broker').description('the NATS trust chain (operator mode) the stack runs under');
  broker
    .command('init')
    .description('create the trust chain (if missing) and write an operator-mode nats-server config that trusts it; run your server with it, then start the stack with BC_NATS_URL and BC_BROKER_DIR')
    .option('--broker-dir <dir>', 'where the trust chain lives (default: BC_BROKER_DIR, else <BC_DATA_DIR>/broker); keep it private, like the master key')
    .requiredOption('--store-dir <dir>', "the server's JetStream store directory")
    .option('--listen <host:port>', 'what the server listens on', '127.0.0.1:4222')
    .option('--server-name <name>', 'server_name (needed once servers cluster)')
    .requiredOption('--out <file>', 'where to write the nats-server config (mode 0600)')
    .action(async (o: { brokerDir?: string; storeDir: string; listen: string; serverName?: string; out: string }) => {
      const dir = resolve(o.brokerDir ?? process.env.BC_BROKER_DIR ?? join(process.env.BC_DATA_DIR ?? './.data', 'broker'));
      const [host, port] = [o.listen.slice(0, o.listen.lastIndexOf(':')), Number(o.listen.slice(o.listen.lastIndexOf(':') + 1))];
      if (!host || !Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`--listen ${o.listen} is not host:port`);
      const material = await loadOrCreateBrokerMaterial(dir);
      await issueJoinCredentials(material);
      const file = writeServerConfig(resolve(o.out), material, {
        host,
        port,
        storeDir: resolve(o.storeDir),
        resolverDir: join(dir, 'resolver'),
        ...(o.serverName ? { serverName: o.serverName } : {}),
      });
      print({ brokerDir: dir, config: file, operator: material.operatorPublicKey, account: material.appAccount.publicKey }, () =>
        [
          `trust chain in ${dir} (operator ${material.operatorPublicKey})`,
          `server config written to ${file}; run: nats-server -c ${file}`,
          `then: BC_NATS_URL=nats://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port} BC_BROKER_DIR=${dir} npm start`,
        ].join('\n'),
      );
    });
}
