import { enrollNode } from '../metal/node/enroll.ts';
import { setMaintenance } from '../metal/node/setMaintenance.ts';
import { createSite } from '../site/site/create.ts';
import type { CommandDefinition } from './commandDefinition.ts';

/** Every command the control plane accepts, by name. */
export const allCommands: readonly CommandDefinition[] = [createSite, enrollNode, setMaintenance];
