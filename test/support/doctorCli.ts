import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DoctorReport } from '../../schemas/doctor.ts';

const cli = fileURLToPath(new URL('../../scripts/better-compute.mjs', import.meta.url));

/** `better-compute doctor --json` as an operator runs it: its exit status and the report it printed. */
export async function runDoctorCli(env: Record<string, string>): Promise<{ status: number; report: DoctorReport }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, '--json', 'doctor'], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const status = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      try {
        resolve({ status, report: DoctorReport.parse(JSON.parse(stdout)) });
      } catch (parseError) {
        reject(new Error(`doctor printed no report (status ${status}):\n${stdout}\n${stderr}`, { cause: parseError }));
      }
    });
  });
}
