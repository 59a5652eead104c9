import type { Command } from 'commander';
import type { DoctorReport } from '../../../schemas/doctor.ts';
import { table } from '../format.ts';
import { runDoctor } from './runDoctor.ts';

const mark = { error: 'ERROR', warning: 'warn', info: 'ok' } as const;

function human(report: DoctorReport): string {
  const rows = report.findings.map((f) => ({ severity: mark[f.severity], check: f.check, code: f.code, message: f.message }));
  const verdict = report.ok ? 'no errors' : `${report.counts.error} error${report.counts.error === 1 ? '' : 's'}`;
  return `${table(rows, ['severity', 'check', 'code', 'message'])}\n${verdict}, ${report.counts.warning} warning${report.counts.warning === 1 ? '' : 's'}`;
}

/** `better-compute doctor`: run on the control-plane host (it reads the data dir, the broker dir and the master key). */
export function addDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check configuration, NATS and broker auth, streams, read models, site agents, BMCs, the master key and clocks; exits 1 on any error')
    .action(async () => {
      const o = program.opts<{ api?: string; token?: string; json?: boolean }>();
      // `--api` has a default; only an address given explicitly (flag or BC_API_URL) overrides the running stack's own.
      const explicitApi = program.getOptionValueSource('api') === 'default' ? undefined : o.api;
      const report = await runDoctor({ ...(explicitApi ? { apiUrl: explicitApi } : {}), ...(o.token ? { token: o.token } : {}) });
      console.log(o.json ? JSON.stringify(report, null, 2) : human(report));
      process.exitCode = report.ok ? 0 : 1;
    });
}
