/** How many recently decoded messages a process keeps: enough for its consumers and reads to meet the same message. */
const REMEMBERED = 2_048;

/**
 * The messages of the event stream this process verified and parsed lately, by stream sequence. In one process the
 * projectors, the orchestrator, the agent watches and the aggregate reads each meet the same message; the first to
 * decode it pays for the MAC and the parse, the others take its entry. A message is taken for a remembered one when
 * it has the same sequence, subject and MAC header: the MAC covers the subject, message id, expected sequence and
 * payload, so that is the message verified here. A copy of the header over other bytes gets the remembered, genuine
 * entry, never its own bytes; a new MAC at a remembered sequence (a stream recreated under the process) is decoded
 * afresh. Every reader gets the same objects: none may change them (events reach readers through
 * `EventCatalog.read`, which builds its own).
 */
export class DecodedEntries<E extends { readonly seq: number; readonly subject: string }> {
  readonly #bySeq = new Map<number, { mac: string; entry: E }>();

  find(seq: number, subject: string, mac: string): E | undefined {
    const hit = this.#bySeq.get(seq);
    return hit && hit.mac === mac && hit.entry.subject === subject ? hit.entry : undefined;
  }

  remember(mac: string, entry: E): E {
    this.#bySeq.set(entry.seq, { mac, entry });
    // Map iteration is insertion order: the first key is the longest remembered.
    if (this.#bySeq.size > REMEMBERED) this.#bySeq.delete(this.#bySeq.keys().next().value!);
    return entry;
  }
}
