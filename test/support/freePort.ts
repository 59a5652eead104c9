import { pickListenPorts } from '../../services/platform/listenPort.ts';

/** A TCP port on 127.0.0.1 that was free a moment ago, below the ephemeral range (no other test's dial can take it). */
export async function freePort(): Promise<number> {
  return (await pickListenPorts('127.0.0.1', 1))[0]!;
}
