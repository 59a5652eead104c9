import { useId } from 'react';
import type { DeployNode, ProfileView } from '../api/shapes.ts';

/** What the deploy dialog collects; `inputs` are the profile's `fromInput` parameters by name. */
export interface DeployChoice {
  profileId: string;
  role: string;
  sshKeys: string;
  inputs: Record<string, string>;
}

/** Inputs the deploy command carries as fields of its own; any other input goes into `inputs`. */
export const namedInputs = ['imageUrl', 'imageSha256', 'userData', 'networkConfig', 'sshKeys'] as const;

/** Inputs the deploy command takes as optional, whatever a profile says of them. */
const optionalInputs = new Set(['userData', 'networkConfig']);

/**
 * When the token may not list profiles (a tenant), the built-in profile is the only choice: it takes the deploy
 * command's own image fields (`DeployNode`).
 */
const builtInDeployInputs = [
  { name: 'imageUrl', optional: false },
  { name: 'imageSha256', optional: false },
  { name: 'userData', optional: true },
  { name: 'networkConfig', optional: true },
];

/** How the inputs every deploy command knows are called on screen; a profile's own inputs go by their names. */
const inputLabels: Record<string, string> = { imageUrl: 'Image URL', imageSha256: 'Image SHA-256', userData: 'User data', networkConfig: 'Network config' };

/** The `fromInput(name)` parameters of a profile's steps, with whether each has a default. */
export function profileInputs(profile: ProfileView | undefined): { name: string; optional: boolean }[] {
  if (!profile) return builtInDeployInputs;
  const found = new Map<string, boolean>();
  for (const step of profile.steps) {
    for (const value of Object.values<unknown>(step.params ?? {})) {
      // User data and the network config are optional in the deploy command itself, whatever the profile says.
      if (value && typeof value === 'object' && '$input' in value && typeof value.$input === 'string')
        found.set(value.$input, 'default' in value || optionalInputs.has(value.$input));
    }
  }
  return [...found].filter(([name]) => name !== 'sshKeys').map(([name, optional]) => ({ name, optional }));
}

/** The deploy form: profile, its inputs, the host role and SSH keys. */
export function DeployFields({ profiles, choice, onChange }: { profiles: ProfileView[]; choice: DeployChoice; onChange: (c: DeployChoice) => void }) {
  const id = useId();
  const profile = profiles.find((p) => p.id === choice.profileId);
  return (
    <div className="form-grid">
      <label htmlFor={`${id}-profile`}>Profile</label>
      <select id={`${id}-profile`} value={choice.profileId} onChange={(e) => onChange({ ...choice, profileId: e.target.value, inputs: {} })}>
        {profiles.length === 0 && <option value="deploy">deploy (built in)</option>}
        {profiles.map((p) => (
          <option key={p.id} value={p.id}>
            {p.id} v{p.version}
            {p.pluginId ? ` (${p.pluginId})` : ' (built in)'}
          </option>
        ))}
      </select>
      {profileInputs(profile).map((input) => (
        <div className="field" key={input.name}>
          <label htmlFor={`${id}-input-${input.name}`}>
            {inputLabels[input.name] ?? input.name}
            {input.optional ? ' (optional)' : ''}
          </label>
          {optionalInputs.has(input.name) ? (
            <textarea
              id={`${id}-input-${input.name}`}
              rows={3}
              value={choice.inputs[input.name] ?? ''}
              onChange={(e) => onChange({ ...choice, inputs: { ...choice.inputs, [input.name]: e.target.value } })}
            />
          ) : (
            <input
              id={`${id}-input-${input.name}`}
              required={!input.optional}
              value={choice.inputs[input.name] ?? ''}
              onChange={(e) => onChange({ ...choice, inputs: { ...choice.inputs, [input.name]: e.target.value } })}
            />
          )}
        </div>
      ))}
      <label htmlFor={`${id}-role`}>Host role</label>
      <input id={`${id}-role`} required value={choice.role} onChange={(e) => onChange({ ...choice, role: e.target.value })} />
      <label htmlFor={`${id}-keys`}>SSH public keys (one per line)</label>
      <textarea
        id={`${id}-keys`}
        rows={3}
        value={choice.sshKeys}
        onChange={(e) => onChange({ ...choice, sshKeys: e.target.value })}
        placeholder="ssh-ed25519 AAAA…"
      />
    </div>
  );
}

/** The `metal.deploy` payload for a choice: the built-in profile is the default (no `profile` field). */
export function deployPayload(nodeId: string, choice: DeployChoice): DeployNode {
  const given = Object.entries(choice.inputs).filter(([, value]) => value.trim() !== '');
  const named = Object.fromEntries(given.filter(([name]) => (namedInputs as readonly string[]).includes(name))) as Partial<
    Record<(typeof namedInputs)[number], string>
  >;
  const inputs = Object.fromEntries(given.filter(([name]) => !(namedInputs as readonly string[]).includes(name)).map(([name, value]) => [name, value.trim()]));
  const sshKeys = choice.sshKeys
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
  return {
    nodeId,
    profile: choice.profileId === 'deploy' ? undefined : choice.profileId,
    imageUrl: named.imageUrl?.trim(),
    imageSha256: named.imageSha256?.trim(),
    userData: named.userData,
    networkConfig: named.networkConfig,
    role: choice.role,
    sshKeys: sshKeys.length > 0 ? sshKeys : undefined,
    inputs: Object.keys(inputs).length > 0 ? inputs : undefined,
  };
}
