import { agentsProjection } from './agents/projector.ts';
import { autonomyProjection } from './autonomy/projector.ts';
import { modulesProjection } from './modules/projector.ts';
import { nodesProjection } from './nodes/projector.ts';
import type { Projection } from './runtime/projection.ts';
import { secretsProjection } from './secrets/projector.ts';
import { sitesProjection } from './sites/projector.ts';
import { tokensProjection } from './tokens/projector.ts';
import { trendsProjection } from './trends/projector.ts';
import { vpsProjection } from './vps/projector.ts';
import { workflowsProjection } from './workflows/projector.ts';

/** Every read model, by name: what `npm start` runs and the API serves. */
export const allProjections: readonly Projection[] = [
  nodesProjection,
  sitesProjection,
  workflowsProjection,
  secretsProjection,
  tokensProjection,
  vpsProjection,
  autonomyProjection,
  agentsProjection,
  modulesProjection,
  trendsProjection,
];
