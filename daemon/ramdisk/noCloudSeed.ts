import { isMap, isSeq, parseDocument, stringify } from 'yaml';
import { AgentError } from '../agent/errors.ts';

/** What the deploy asked to land on the host at first boot. */
export interface NoCloudInput {
  /** New for every deploy: cloud-init runs its once-per-instance modules (keys, users) again only for a new id. */
  instanceId: string;
  hostname: string;
  sshKeys: readonly string[];
  /** The user's own user data, any format cloud-init reads. */
  userData?: string | undefined;
  /** cloud-init network configuration (version 1 or 2), YAML. */
  networkConfig?: string | undefined;
}

/** The files of a NoCloud seed, by the names cloud-init's NoCloud datasource reads from a `cidata` filesystem. */
export type NoCloudFiles = Readonly<Record<'meta-data' | 'user-data', string>> & { readonly 'network-config'?: string };

const CLOUD_CONFIG = '#cloud-config';
/**
 * No folding: at the yaml library's default 80 columns an SSH key (100-750 characters) is split over lines. That is
 * still the same YAML, but the key no longer reads back as itself from the seed (grep, a check of the deployed disk).
 */
const YAML_OPTIONS = { lineWidth: 0 } as const;

/** User data formats that can travel next to a `#cloud-config` part in a MIME multipart, by their first line (cloud-init's "user data formats"). */
const partTypes: readonly (readonly [prefix: string, contentType: string])[] = [
  ['#!', 'text/x-shellscript'],
  ['#cloud-boothook', 'text/cloud-boothook'],
  ['#include', 'text/x-include-url'],
];

const invalid = (message: string) => new AgentError('INVALID_COMMAND', message);

/** The user's cloud-config with the deploy's SSH keys added to `ssh_authorized_keys` (comments and order kept). */
function mergeCloudConfig(userData: string, sshKeys: readonly string[]): string {
  const doc = parseDocument(userData);
  if (doc.errors.length > 0) throw invalid(`the user data is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw invalid('the #cloud-config user data must be a mapping');
  if (sshKeys.length === 0) return userData;
  const existing = doc.get('ssh_authorized_keys', true);
  if (existing !== undefined && !isSeq(existing)) throw invalid('ssh_authorized_keys in the user data must be a list');
  const present = new Set(existing ? existing.toJSON() : []);
  const added = sshKeys.filter((key) => !present.has(key));
  if (existing) for (const key of added) existing.add(key);
  else doc.set('ssh_authorized_keys', added);
  const text = doc.toString(YAML_OPTIONS);
  return text.startsWith(CLOUD_CONFIG) ? text : `${CLOUD_CONFIG}\n${text}`;
}

/** Keys next to a script: a MIME multipart of a `#cloud-config` part and the user's part, as cloud-init reads it. */
function multipart(userData: string, contentType: string, sshKeys: readonly string[]): string {
  const boundary = `bc-nocloud-${Buffer.from(userData).length.toString(36)}-${sshKeys.length}`;
  if (userData.includes(boundary)) throw invalid('the user data contains the MIME boundary this seed would use');
  const part = (type: string, body: string) => `--${boundary}\nContent-Type: ${type}; charset="utf-8"\nMIME-Version: 1.0\n\n${body}\n`;
  return [
    `Content-Type: multipart/mixed; boundary="${boundary}"\nMIME-Version: 1.0\n\n`,
    part('text/cloud-config', `${CLOUD_CONFIG}\n${stringify({ ssh_authorized_keys: sshKeys }, YAML_OPTIONS)}`),
    part(contentType, userData),
    `--${boundary}--\n`,
  ].join('');
}

function userDataOf(userData: string | undefined, sshKeys: readonly string[]): string {
  if (userData === undefined || userData.trim() === '')
    return `${CLOUD_CONFIG}\n${stringify(sshKeys.length > 0 ? { ssh_authorized_keys: sshKeys } : {}, YAML_OPTIONS)}`;
  if (userData.startsWith(`${CLOUD_CONFIG}\n`) || userData.trimEnd() === CLOUD_CONFIG) return mergeCloudConfig(userData, sshKeys);
  if (sshKeys.length === 0) return userData;
  const type = partTypes.find(([prefix]) => userData.startsWith(prefix))?.[1];
  if (type === undefined)
    throw invalid('SSH keys can be added to #cloud-config, a script (#!), #cloud-boothook or #include user data; put them in your own user data instead');
  return multipart(userData, type, sshKeys);
}

function networkConfigOf(text: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || !isMap(doc.contents) || !doc.has('version'))
    throw invalid('the network config must be a YAML mapping with a version (cloud-init network config v1 or v2)');
  return text;
}

/**
 * The NoCloud seed of a deploy (cloud-init's NoCloud datasource): `meta-data` with the instance id and hostname,
 * `user-data` with the deploy's SSH keys merged into the user's data, and `network-config` when one was given.
 */
export function noCloudSeed(input: NoCloudInput): NoCloudFiles {
  for (const key of input.sshKeys) if (/[\r\n]/.test(key)) throw invalid('an SSH key must be one line');
  return {
    'meta-data': stringify({ 'instance-id': input.instanceId, 'local-hostname': input.hostname }, YAML_OPTIONS),
    'user-data': userDataOf(input.userData, input.sshKeys),
    ...(input.networkConfig === undefined ? {} : { 'network-config': networkConfigOf(input.networkConfig) }),
  };
}
