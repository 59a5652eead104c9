/**
 * The crun runtime plugin's program (docs/bcx.md, "The crun runtime"): `node plugin.mjs --config <file>`, started by `bcd node`
 * from its plugins folder, privileged (it mounts and makes namespaces). Its state is `$BCX_STATE_DIR`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { serveBcxPlugin } from '../sdk/bcx/index.ts';
import { CrunRuntimeConfig } from './config.ts';
import { crunCli } from './crunCli.ts';
import { crunRuntime } from './crunRuntime.ts';

const { values } = parseArgs({ options: { config: { type: 'string' }, id: { type: 'string', default: 'crun' } } });
if (!values.config) {
  process.stderr.write('crun-runtime: --config <file> is required\n');
  process.exit(2);
}
const config = CrunRuntimeConfig.parse(JSON.parse(readFileSync(values.config, 'utf8')));
await serveBcxPlugin(crunRuntime({ id: values.id, config, crun: crunCli(config), stateDir: process.env.BCX_STATE_DIR ?? process.cwd() }));
