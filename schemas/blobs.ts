/**
 * A step artefact's capability URL: `<api>/v1/blobs/<nodeId>/<capability>/<sha256>`. The digest in the path lets a
 * site cache fetch the artefact once, verify it and serve it to the machine.
 */
export const blobPath = (nodeId: string, capability: string, sha256: string) => `/v1/blobs/${nodeId}/${capability}/${sha256}`;

const BLOB_PATH = /^\/v1\/blobs\/[a-z0-9][a-z0-9_-]*\/[A-Za-z0-9_-]+\/([0-9a-f]{64})$/;

/** The sha256 a blob URL names, or undefined for any other URL. */
export function blobDigestOf(url: string): string | undefined {
  try {
    return BLOB_PATH.exec(new URL(url).pathname)?.[1];
  } catch {
    return undefined;
  }
}

/** A stored step artefact: its digest, its size and the capability URL its node fetches it by. */
export interface StoredBlob {
  readonly sha256: string;
  readonly size: number;
  /** Unguessable and per node: whoever holds it can read this one artefact for this one node, nothing else. */
  readonly url: string;
}
