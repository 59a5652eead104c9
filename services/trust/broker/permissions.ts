import { AgentDurables, Inboxes, JetStreamApi, Streams, Subjects } from '../../../schemas/subjects.ts';
import { agentRoleOf } from '../../../schemas/trust/agentIds.ts';
import { BrokerTrustError } from './errors.ts';

/**
 * Who a connection is, as far as the broker is concerned. `node` is the agent inside a machine (`bcd ramdisk`);
 * `join` is a machine with no credentials yet; `inspector` is a person watching the fleet (`nats sub 'bc.>'`). Ids
 * are subject tokens, so one grant names exactly one site/node.
 */
export type RoleGrant =
  | { role: 'control-plane' }
  | { role: 'site'; agentId: string; siteId: string }
  | { role: 'node'; agentId: string; siteId: string; nodeId: string }
  | { role: 'join' }
  | { role: 'inspector' };

export type BrokerRole = RoleGrant['role'];

/**
 * The permission claims of a user JWT (the wire spelling of `nats.pub` / `nats.sub`). No role carries `nats.resp`:
 * see the control-plane grant for what it costs the server.
 */
export interface BrokerPermissions {
  pub: { allow: string[]; deny: string[] };
  sub: { allow: string[]; deny: string[] };
}

const commands = Streams.agentCommands.name;
const results = Streams.agentResults.name;
const token = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The reply inbox prefix a connection of this grant must pass as the client's `inboxPrefix` option. */
export function inboxPrefixFor(grant: RoleGrant): string {
  switch (grant.role) {
    case 'control-plane':
      return Inboxes.controlPlane;
    case 'join':
      return Inboxes.join;
    case 'inspector':
      return Inboxes.inspector;
    default:
      return Inboxes.agent(grant.agentId);
  }
}

/** The durable consumer (on BC_AGENT_COMMANDS) the control plane creates for an agent; the agent only pulls from it. */
export function agentDurableFor(grant: Extract<RoleGrant, { role: 'site' | 'node' }>): string {
  return grant.role === 'site' ? AgentDurables.site(grant.siteId) : AgentDurables.node(grant.agentId);
}

/** The filter subject the control plane gives that durable. */
export function agentCommandFilterFor(grant: Extract<RoleGrant, { role: 'site' | 'node' }>): string {
  return grant.role === 'site' ? Subjects.siteAgentCommandFilter(grant.siteId) : Subjects.nodeAgentCommands(grant.siteId, grant.nodeId);
}

/**
 * The broker permissions of a role: allow lists only, so anything not listed is denied. Agents cannot create or
 * change consumers (on 2.9 the filter travels in the request body, out of reach of subject permissions); they pull
 * from the one durable made for them, ack on it, hand their own results to the result intake (and read back what it
 * stored for them), register only their own key (with the
 * user key the JWT is issued to) and read their own replies. No agent may send `bc.cmd.*`.
 */
export function permissionsFor(grant: RoleGrant, userPublicKey?: string): BrokerPermissions {
  assertTokens(grant);
  switch (grant.role) {
    case 'control-plane':
      // Publish anywhere: the control plane answers agents and joiners on their own inboxes (`_INBOX_<agentId>`),
      // which no subject wildcard can name. nats-server's response permission (`resp`) would allow only those replies,
      // but the server then records every message it delivers with a reply subject to the connection (every
      // JetStream delivery) for two minutes and scans that whole record on each delivery once it holds 4,096
      // (`pruneReplyPerms`): 84 % of the server's CPU in the 300-machine fleet bench. It widens no real right: this
      // credential reads every agent request (`bc.>`), so it could already answer any of them, and it holds the
      // whole JetStream API (docs/security.md, broker roles).
      return {
        pub: { allow: ['>'], deny: [] },
        sub: { allow: [Subjects.all, Inboxes.allControlPlane, JetStreamApi.allAdvisories], deny: [] },
      };
    case 'join':
      return {
        pub: { allow: [Subjects.allJoins], deny: [] },
        sub: { allow: [`${Inboxes.join}.>`], deny: [] },
      };
    case 'inspector':
      // Reads the platform's subjects and nothing else: no JetStream API, no inbox (so no reply meant for anyone
      // else), and not the join requests, whose single-use tokens are bearer secrets until spent. Publishes nothing.
      return {
        pub: { allow: [], deny: ['>'] },
        sub: { allow: [Subjects.all], deny: [Subjects.allJoins] },
      };
    case 'site':
    case 'node': {
      const durable = agentDurableFor(grant);
      const ownResults = grant.role === 'site' ? Subjects.siteAgentResults(grant.siteId) : Subjects.nodeAgentResults(grant.siteId, grant.nodeId);
      // What the result intake stored for its site or node: read (direct get), never published, by the agent.
      const ownAccepted = grant.role === 'site' ? Subjects.siteAcceptedResults(grant.siteId) : Subjects.nodeAcceptedResults(grant.siteId, grant.nodeId);
      // An agent inside a machine says it is still working (`AgentHeartbeat`), on its own node's subject only.
      const heartbeats = grant.role === 'node' ? [Subjects.agentHeartbeat(grant.siteId, grant.nodeId)] : [];
      const watched = grant.role === 'site' ? [Subjects.siteNodeAgentCommands(grant.siteId)] : [];
      // Site agents ask for BMC credential grants (`daemon/site/grantedCredentials.ts`) and for the join tokens of
      // their machines' boot scripts (`daemon/site/bootJoinTokens.ts`); the answering services check rights.
      const requests = grant.role === 'site' ? [Subjects.secretGrant, Subjects.bootJoinToken] : [];
      const logs = logSubjectsFor(grant);
      return {
        pub: {
          allow: [
            JetStreamApi.consumerNext(commands, durable),
            JetStreamApi.consumerInfo(commands, durable),
            JetStreamApi.consumerAcks(commands, durable),
            // Results go to the result intake (core request-reply); no stream captures this subject.
            ownResults,
            JetStreamApi.directGetLast(results, ownAccepted),
            // Registration only of its own key, on a subject naming this agent and this user: the subject is the
            // identity the registration service sees (nats-server 2.9 tells a responder nothing of the sender).
            // Likewise its own key status (whether a rotation of its key is pending), and no other agent's.
            ...(userPublicKey ? [Subjects.agentRegistration(grant.agentId, userPublicKey), Subjects.agentKeyStatus(grant.agentId, userPublicKey)] : []),
            ...requests,
            ...heartbeats,
            ...logs,
          ],
          deny: [],
        },
        sub: { allow: [`${inboxPrefixFor(grant)}.>`, ...watched], deny: [] },
      };
    }
  }
}

/**
 * Where an agent may publish node log lines (BC_LOGS), so the subject proves whose a line is: a site agent its own
 * site's `site-agent` and `serial` lines (it drives every node's BMC and relays their consoles), an agent inside a
 * machine its own node's lines of its own kind, told by the agent id the control plane issued the credentials to
 * (`ramdisk-…` prints as `ramdisk`, an installed host's `node-…` as `node-agent`; a tenant's host cannot pass for the
 * ramdisk that wiped it). Any other agent id prints nothing.
 */
function logSubjectsFor(grant: Extract<RoleGrant, { role: 'site' | 'node' }>): string[] {
  if (grant.role === 'site') return [Subjects.siteNodeLogs(grant.siteId, 'site-agent'), Subjects.siteNodeLogs(grant.siteId, 'serial')];
  const kind = agentRoleOf(grant.agentId);
  const source = kind === 'ramdisk' ? 'ramdisk' : kind === 'node' ? 'node-agent' : undefined;
  return source ? [Subjects.nodeLog(grant.siteId, grant.nodeId, source)] : [];
}

/** The largest message an agent inside a machine (a ramdisk, an installed host's `bcd node`) may publish. */
export const NODE_AGENT_MAX_PAYLOAD = 128 << 10;

/**
 * The largest message a role may publish (the user JWT's `payload` limit: the server refuses a larger message and
 * closes the connection), or undefined for the server's `max_payload` (1 MiB by default). An agent inside a machine
 * sends small results (wipe and inventory reports), heartbeats and requests only, and it may be a tenant's host; a
 * site agent relays HTTP answers of up to 1 MiB (`HTTP_PROXY_MAX_RESPONSE_BYTES`).
 */
export function maxPayloadFor(grant: RoleGrant): number | undefined {
  return grant.role === 'node' ? NODE_AGENT_MAX_PAYLOAD : undefined;
}

function assertTokens(grant: RoleGrant): void {
  const ids = grant.role === 'site' ? [grant.agentId, grant.siteId] : grant.role === 'node' ? [grant.agentId, grant.siteId, grant.nodeId] : [];
  for (const id of ids) {
    if (!token.test(id)) throw new BrokerTrustError('INVALID_GRANT', `${JSON.stringify(id)} is not a single subject token`);
  }
}
