import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { AgentCommand, AgentCommandParams } from '../../schemas/agent/agentCommand.ts';
import type { Logger } from '../../services/platform/logger.ts';
import type { ImageCache } from './imageCache.ts';

/**
 * Learns image sources from the `image.write` commands sent to this site's machines (a plain subscription on
 * `bc.site.<siteId>.node.*.cmd`, next to the ramdisks' durable consumers), so the control plane can name the
 * upstream URL and the machines still read the bytes from this site's verified cache. Only commands published into
 * the agent command stream are seen: a machine cannot make the site agent fetch an arbitrary URL.
 */
export function watchImageSources(nc: NatsConnection, siteId: string, images: ImageCache, ownUrl: string, log: Logger): Subscription {
  return nc.subscribe(`bc.site.${siteId}.node.*.cmd`, {
    callback: (_err, msg) => {
      try {
        const command = AgentCommand.parse(msg.json());
        if (command.kind !== 'image.write' || command.siteId !== siteId) return;
        const params = AgentCommandParams['image.write'].parse(command.params);
        if (params.imageUrl.startsWith(`${ownUrl}/`)) return;
        images.register(params.imageUrl, params.sha256);
      } catch (err) {
        log.debug({ err, subject: msg.subject }, 'ignored a node command the image watcher cannot read');
      }
    },
  });
}
