import type { DoctorCheck, Finding, FindingCode, FindingSeverity } from '../../../schemas/doctor.ts';

/** One finding, as every check writes it. */
export const finding = (check: DoctorCheck, code: FindingCode, severity: FindingSeverity, message: string, detail?: Record<string, unknown>): Finding => ({
  check,
  code,
  severity,
  message,
  ...(detail ? { detail } : {}),
});

/** A check that did not run because `because` failed first. */
export const skipped = (check: DoctorCheck, because: string): Finding => finding(check, 'CHECK_SKIPPED', 'info', `not checked: ${because}`);
