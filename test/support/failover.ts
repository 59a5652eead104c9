import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A test's own request to a cluster while it elects leaders again after a node was killed (the node the test is
 * connected to may be the one): any failure is tried again, as the services do, for up to 30 s. A command keeps its
 * id across the tries, so a try that was applied before its answer got lost is not applied twice.
 */
export async function whileFailingOver<T>(request: () => Promise<T>): Promise<T> {
  for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
    try {
      return await request();
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}
