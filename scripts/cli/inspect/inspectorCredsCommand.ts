import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { brokerDirOf, loadConfig } from '../../../services/platform/config.ts';
import { brokerMaterialExists } from '../../../services/stack/controlPlaneConnection.ts';
import { loadOrCreateBrokerMaterial } from '../../../services/trust/broker/brokerMaterial.ts';
import { INSPECTOR_TTL_SECONDS, issueInspectorCredentials } from '../../../services/trust/broker/userCredentials.ts';
import { CliError } from '../cliError.ts';

type Output = (value: unknown, human: () => string) => void;

/** The longest an inspector credential may live: it is for watching now, not a standing grant. */
const MAX_TTL_SECONDS = 24 * 3600;
const units = { s: 1, m: 60, h: 3600 } as const;

/** `90s`, `30m`, `2h` → seconds; refuses anything else and anything past a day. */
export function parseTtl(value: string): number {
  const match = /^(\d{1,6})([smh])$/.exec(value);
  const seconds = match ? Number(match[1]) * units[match[2] as keyof typeof units] : NaN;
  if (!(seconds > 0 && seconds <= MAX_TTL_SECONDS)) throw new CliError('INVALID_TTL', `--ttl ${value}: give 1s to 24h, as <n>s, <n>m or <n>h`);
  return seconds;
}

/** `broker creds --inspector`: a read-only credential for `nats sub 'bc.>'` and `better-compute tail`. */
export function addInspectorCredsCommand(broker: Command, print: Output): void {
  broker
    .command('creds')
    .description("issue a credential from the trust chain; --inspector: read-only (subscribe to bc.>, publish nothing), short-lived, for nats sub 'bc.>'")
    .option('--inspector', 'the read-only inspector credential (the only kind this command issues)')
    .option('--ttl <duration>', `how long it is valid: <n>s, <n>m or <n>h, at most 24h (default ${INSPECTOR_TTL_SECONDS / 3600}h)`)
    .option('--out <file>', 'where to write it (mode 0600; default <broker dir>/creds/inspector.creds)')
    .action(async (o: { inspector?: boolean; ttl?: string; out?: string }) => {
      if (!o.inspector)
        throw new CliError('CREDENTIAL_KIND_REQUIRED', 'say which credential: --inspector (control-plane credentials are issued by npm start alone)');
      const ttlSeconds = o.ttl === undefined ? INSPECTOR_TTL_SECONDS : parseTtl(o.ttl);
      const dir = resolve(brokerDirOf(loadConfig()));
      // Never a new trust chain here: the server would not trust it, and the credential would be refused.
      if (!brokerMaterialExists(dir))
        throw new CliError('BROKER_MATERIAL_MISSING', `${dir} holds no trust chain (npm start or better-compute broker init makes it)`);
      const issued = await issueInspectorCredentials(await loadOrCreateBrokerMaterial(dir), { ttlSeconds });
      const out = resolve(o.out ?? join(dir, 'creds', 'inspector.creds'));
      writeFileSync(out, issued.creds, { mode: 0o600 });
      const expiresAt = new Date(issued.expiresAt * 1000).toISOString();
      print({ creds: out, user: issued.publicKey, expiresAt }, () =>
        [
          `read-only inspector credential written to ${out} (expires ${expiresAt})`,
          `watch: nats sub --creds ${out} 'bc.>'   or: better-compute tail --creds ${out} 'bc.>'`,
        ].join('\n'),
      );
    });
}
