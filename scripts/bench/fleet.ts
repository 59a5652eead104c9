import { printFleetReport } from './fleet/fleetReport.ts';
import { parseFleetOptions } from './fleet/options.ts';
import { runFleet } from './fleet/run.ts';

/**
 * `npm run bench:fleet -- [--quick] [--machines N] [--sites N] [--layout compact|split] [--baseline-layout L]`: prints
 * machines per minute, steps per second, control-plane CPU per step, step scheduling latency and the memory of each
 * process (peak and at the end). With `--baseline-layout` the same fleet runs again right after under that layout,
 * and its figures go into the result as the baseline, with the ratio of CPU per step and of memory.
 */
const options = parseFleetOptions(process.argv.slice(2));
const result = await runFleet(options);
if (options.baselineLayout) {
  console.log(`\nbaseline: the same fleet under the ${options.baselineLayout} layout`);
  const baseline = await runFleet({ ...options, layout: options.baselineLayout });
  result.baseline = {
    layout: baseline.settings.layout as string,
    controlPlaneCpuMsPerStep: baseline.controlPlaneCpuMsPerStep,
    controlPlanePeakMiB: baseline.controlPlanePeakMiB,
    cpuSeconds: baseline.cpuSeconds,
    memoryMiB: baseline.memoryMiB,
    schedulingMs: baseline.steps.scheduling,
    cycleSeconds: baseline.seconds.cycle,
    released: baseline.machines.released,
    cpuRatio: result.controlPlaneCpuMsPerStep / baseline.controlPlaneCpuMsPerStep,
    memoryRatio: result.controlPlanePeakMiB / baseline.controlPlanePeakMiB,
    referenceWork: baseline.machine.referenceWork,
  };
}
printFleetReport(result, options.out);
process.exit(0);
