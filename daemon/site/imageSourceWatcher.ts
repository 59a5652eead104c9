import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { AgentCommand, AgentCommandParams } from '../../schemas/agent/agentCommand.ts';
import type { Logger } from '../../services/platform/logger.ts';
import type { ImageCache } from './imageCache.ts';

/** The artefact a command makes its machine fetch: the image of `image.write`, the node seed of `userdata.write`, a module bundle. */
function sourceOf(command: AgentCommand): { url: string; sha256: string } | undefined {
  if (command.kind === 'image.write') {
    const params = AgentCommandParams['image.write'].parse(command.params);
    return { url: params.imageUrl, sha256: params.sha256 };
  }
  if (command.kind === 'userdata.write') return AgentCommandParams['userdata.write'].parse(command.params).seed;
  if (command.kind === 'module.apply') {
    const params = AgentCommandParams['module.apply'].parse(command.params);
    return { url: params.bundleUrl, sha256: params.bundleSha256 };
  }
  return undefined;
}

/**
 * Learns image sources from the `image.write` commands (and node seeds from `userdata.write`) sent to this site's machines (a plain subscription on
 * `bc.site.<siteId>.node.*.cmd`, next to the ramdisks' durable consumers), so the control plane can name the
 * upstream URL and the machines still read the bytes from this site's verified cache. Only commands published into
 * the agent command stream are seen: a machine cannot make the site agent fetch an arbitrary URL.
 */
export function watchImageSources(nc: NatsConnection, siteId: string, images: ImageCache, ownUrl: string, log: Logger): Subscription {
  return nc.subscribe(`bc.site.${siteId}.node.*.cmd`, {
    callback: (_err, msg) => {
      try {
        const command = AgentCommand.parse(msg.json());
        if (command.siteId !== siteId) return;
        const source = sourceOf(command);
        if (!source || source.url.startsWith(`${ownUrl}/`)) return;
        images.register(source.url, source.sha256);
      } catch (err) {
        log.debug({ err, subject: msg.subject }, 'ignored a node command the image watcher cannot read');
      }
    },
  });
}
