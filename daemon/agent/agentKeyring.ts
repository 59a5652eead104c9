import type { KeyObject } from 'node:crypto';
import type { AgentIdentity } from './identity.ts';

/**
 * The agent's current signing key, as everything that signs (results, heartbeats, grant and boot-token requests)
 * holds it: one object read at each signature, so a rotation replaces the key for all of them at once.
 */
export class AgentKeyring implements AgentIdentity {
  #current: AgentIdentity;

  constructor(initial: AgentIdentity) {
    this.#current = initial;
  }

  get privateKey(): KeyObject {
    return this.#current.privateKey;
  }

  get publicKeyRaw(): Uint8Array {
    return this.#current.publicKeyRaw;
  }

  get publicKeyBase64(): string {
    return this.#current.publicKeyBase64;
  }

  get keyId(): string {
    return this.#current.keyId;
  }

  /** The key as it is now (a rotation does not change what this returned). */
  snapshot(): AgentIdentity {
    return this.#current;
  }

  /** Signs with `next` from now on: called only once the control plane registered it and it is on disk. */
  replace(next: AgentIdentity): void {
    this.#current = next;
  }
}
