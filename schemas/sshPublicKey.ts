import { z } from 'zod';

/**
 * An OpenSSH public key line (`<type> <base64> [comment]`). Checked roughly: the type is one OpenSSH knows and the
 * key body is base64; a private key pasted by mistake is refused here, before it reaches the log.
 */
export const SshPublicKey = z
  .string()
  .max(8_192)
  .regex(
    /^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]{16,}={0,3}( [^\r\n]*)?$/,
    'must be an OpenSSH public key line ("ssh-ed25519 AAAA... comment")',
  );
