import { z } from 'zod';
import { Category, Disposition, Owner } from './policies.ts';

export const SetPolicy = z.object({ category: Category, disposition: Disposition.nullable() }).strict();
export const PauseOwner = z.object({ owner: Owner, paused: z.boolean(), reason: z.string().max(300).optional() }).strict();
export const HaltAutonomy = z.object({ halted: z.boolean(), reason: z.string().max(300).optional() }).strict();
