import { statSync, readFileSync } from 'node:fs';
import type { Finding } from '../../../schemas/doctor.ts';
import type { Config } from '../../../services/platform/config.ts';
import { masterKeyFileOf, parseMasterKey, type MasterKey } from '../../../services/secrets/masterKey.ts';
import { finding } from './finding.ts';

/**
 * The master key as the control plane would load it, without creating one: present, well-formed, private (0600) and
 * the key the stored secrets were sealed under (`sealedKeyIds`, when the API could list them).
 */
export function checkMasterKey(config: Config, sealedKeyIds: readonly string[] | undefined): Finding[] {
  let key: MasterKey;
  let source: string;
  if (config.masterKey !== undefined && config.masterKey !== '') {
    source = 'BC_MASTER_KEY';
    try {
      key = parseMasterKey(config.masterKey, source);
    } catch (err) {
      return [finding('masterKey', 'MASTER_KEY_INVALID', 'error', (err as Error).message)];
    }
  } else {
    const file = masterKeyFileOf(config);
    source = file;
    let mode: number;
    try {
      mode = statSync(file).mode & 0o777;
    } catch {
      return [finding('masterKey', 'MASTER_KEY_MISSING', 'error', `no master key: ${file} does not exist and BC_MASTER_KEY is unset`, { file })];
    }
    if ((mode & 0o077) !== 0) {
      return [
        finding('masterKey', 'MASTER_KEY_PERMISSIONS', 'error', `${file} has mode ${mode.toString(8).padStart(4, '0')}; it must be 0600 (chmod 600 ${file})`, {
          file,
          mode: mode.toString(8),
        }),
      ];
    }
    try {
      key = parseMasterKey(readFileSync(file, 'utf8'), `master key file ${file}`);
    } catch (err) {
      return [finding('masterKey', 'MASTER_KEY_INVALID', 'error', (err as Error).message, { file })];
    }
  }
  const foreign = [...new Set(sealedKeyIds ?? [])].filter((id) => id !== key.keyId);
  if (foreign.length > 0) {
    return [
      finding(
        'masterKey',
        'MASTER_KEY_MISMATCH',
        'error',
        `stored secrets are sealed under master key ${foreign.join(', ')}, not ${key.keyId} from ${source}`,
        { keyId: key.keyId, sealedUnder: foreign },
      ),
    ];
  }
  return [finding('masterKey', 'MASTER_KEY_OK', 'info', `master key ${key.keyId} from ${source}`, { keyId: key.keyId, source })];
}
