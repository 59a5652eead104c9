import type { NodeOperation } from '../../../schemas/metal/workflow.ts';

/** Operations whose cancel keeps the node out of service: the disk may hold half an image, or the last tenant's data. */
export const leavesDiskUnknown: ReadonlySet<NodeOperation> = new Set(['deploy', 'release', 'retire']);

/** Operations whose starting state the node does not keep, so a cancel before any step has nowhere to go back to. */
export const endsFailedAlways: ReadonlySet<NodeOperation> = new Set(['inspect', 'retire']);
