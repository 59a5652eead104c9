/**
 * How a server gets the platform's SSH public keys. Hetzner's `ssh_keys` field names keys already stored in the
 * project (`POST /v1/ssh_keys`), which would make a create two mutating requests and lose the single-request
 * idempotency the plugin relies on; instead the keys ride in the cloud-init user data, which Hetzner's images run.
 * With the operator's own user data, both go as a multipart MIME message, which cloud-init merges part by part.
 */
const boundary = 'bc-hetzner-cloud-user-data';

function keysPart(sshKeys: readonly string[]): string {
  return ['#cloud-config', 'ssh_authorized_keys:', ...sshKeys.map((key) => `  - ${JSON.stringify(key)}`), ''].join('\n');
}

// cloud-init picks a part's handler by its MIME type, which it otherwise guesses from the first line.
function contentTypeOf(userData: string): string {
  if (userData.startsWith('#cloud-config')) return 'text/cloud-config';
  if (userData.startsWith('#!')) return 'text/x-shellscript';
  if (userData.startsWith('#include')) return 'text/x-include-url';
  return 'text/plain';
}

/** The user data to send: the keys alone, the operator's data alone, or both as `multipart/mixed`; null for neither. */
export function userDataWithKeys(sshKeys: readonly string[], userData: string | undefined): string | null {
  if (sshKeys.length === 0) return userData ?? null;
  if (userData === undefined) return keysPart(sshKeys);
  const part = (type: string, body: string) => [`--${boundary}`, `Content-Type: ${type}; charset="utf-8"`, 'MIME-Version: 1.0', '', body].join('\n');
  return [
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    'MIME-Version: 1.0',
    '',
    part('text/cloud-config', keysPart(sshKeys)),
    part(contentTypeOf(userData), userData),
    `--${boundary}--`,
    '',
  ].join('\n');
}
