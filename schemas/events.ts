import { authEvents } from './auth/events.ts';
import { autonomyEvents } from './autonomy/controlEvents.ts';
import { decisionEvents } from './autonomy/decisionEvents.ts';
import { EventCatalog } from './eventCatalog.ts';
import { assignmentEvents } from './fleet/assignmentEvents.ts';
import { moduleEvents } from './fleet/modules.ts';
import { publisherEvents } from './fleet/publishers.ts';
import { rolloutEvents } from './fleet/rolloutEvents.ts';
import { templateEvents } from './fleet/templateEvents.ts';
import { metalEvents } from './metal/events.ts';
import { nodeIdentityEvents } from './metal/nodeIdentity.ts';
import { pluginEvents } from './plugins/events.ts';
import { workflowEvents } from './metal/workflowEvents.ts';
import { siteEvents } from './site/events.ts';
import { secretEvents } from './secrets/events.ts';
import { approverEvents } from './trust/approvals.ts';
import { trustEvents } from './trust/events.ts';
import { vpsEvents } from './vps/events.ts';

/** Every event type the platform writes, for readers that see the whole log (projectors, the event API). */
export const eventCatalog = new EventCatalog([
  ...siteEvents,
  ...metalEvents,
  ...nodeIdentityEvents,
  ...workflowEvents,
  ...trustEvents,
  ...approverEvents,
  ...secretEvents,
  ...authEvents,
  ...pluginEvents,
  ...vpsEvents,
  ...decisionEvents,
  ...autonomyEvents,
  ...publisherEvents,
  ...moduleEvents,
  ...templateEvents,
  ...assignmentEvents,
  ...rolloutEvents,
]);
export type PlatformEvent = ReturnType<typeof eventCatalog.read>;
