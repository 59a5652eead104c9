import { z } from 'zod';

/**
 * Who may send a command: a property of each command definition, from which the composition root derives every
 * process's view (`services/api/commandCatalog.ts`). A command lists every sender it has.
 * - `admin`: only an admin, over the HTTP API (who approves is set by the admin alone).
 * - `operator`: operators (and admins) over `POST /v1/commands/<name>`.
 * - `tenant`: a tenant too, over the same route, for its own nodes and instances (the decider checks ownership).
 * - `approver`: only an approver, through `/v1/approvals`.
 * - `engine`: the workflow engine, the BMC monitor, the VPS reconciler and plugins, over NATS (`bc.cmd.<name>`).
 * - `edge`: an API route sends it itself after doing what the command must not carry (sealing a secret, hashing a
 *   token), never as `POST /v1/commands/<name>`.
 * - `join`: minted by an issuer that keeps the token's secret and spent only by the join service.
 * - `agent`: an agent about itself, on its own registration subject, so the broker binds it to the asking agent.
 */
export const CommandExposure = z.enum(['admin', 'operator', 'tenant', 'approver', 'engine', 'edge', 'join', 'agent']);
export type CommandExposure = z.infer<typeof CommandExposure>;

/**
 * Senders whose commands mint or hold credentials or decide whom the platform trusts: such a command runs only on
 * the in-process bus of a process that authenticated its caller, never on a NATS message that names no verified
 * sender.
 */
const inProcessSenders: ReadonlySet<CommandExposure> = new Set(['edge', 'approver', 'join', 'admin']);

/** True when a command with this exposure is never served over NATS (`COMMAND_NOT_SERVED_OVER_NATS`). */
export function isInProcessOnly(exposure: readonly CommandExposure[]): boolean {
  return exposure.some((sender) => inProcessSenders.has(sender));
}
