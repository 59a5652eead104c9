import { contestBoot } from '../trust/ramdiskBoot/contestBoot.ts';
import { createJoinToken } from '../trust/joinToken/create.ts';
import { countRefusals } from '../trust/refusals/countRefusals.ts';
import { completeStep } from './workflow/completeStep.ts';
import { countRejectedResults } from './workflow/countRejectedResults.ts';
import { failStep } from './workflow/failStep.ts';
import { rejectResult } from './workflow/rejectResult.ts';
import { startStep } from './workflow/startStep.ts';

/**
 * The commands an executor decides on its own bus when its process hands it none: an attempt's workflow commands and
 * what its steps mint or contest (`ctx.pki`, ramdisk boots; never served over NATS), and the counts of its result
 * intake's refusals (`trust.countRefusals`). They are the only deciders a plugin worker loads
 * (`test/unit/workerModuleGraph.unit.test.ts`).
 */
export const executorCommands = [startStep, completeStep, failStep, rejectResult, countRejectedResults, createJoinToken, contestBoot, countRefusals] as const;
