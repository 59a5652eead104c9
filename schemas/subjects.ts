/**
 * The subject map: every subject the platform publishes or subscribes to starts with `bc.` and is built here, so
 * `nats sub 'bc.>'` reads as the fleet's story and docs/messaging.md's subject table has one source.
 */
export const Subjects = {
  /** Events of one aggregate instance: `bc.evt.metal.node.n1`. */
  aggregateEvents: (module: string, aggregate: string, id: string) => `bc.evt.${module}.${aggregate}.${id}`,
  /** Every event of a module: the filter a projector or `nats sub` uses. */
  moduleEvents: (module: string) => `bc.evt.${module}.>`,
  allEvents: 'bc.evt.>',
  /** Command request-reply: `bc.cmd.metal.enroll`. */
  command: (name: string) => `bc.cmd.${name}`,
  allCommands: 'bc.cmd.>',
  /**
   * The same request sent to the responder that owns its aggregate's partition (`schemas/commandPartitions.ts`):
   * `bc.cmdp.17.vps.createInstance`. Outside `bc.cmd.>`, so no message is both a partition's and the queue's.
   */
  partitionedCommand: (partition: number, name: string) => `bc.cmdp.${partition}.${name}`,
  /** Every command of one partition: what its owner subscribes to. */
  commandPartition: (partition: number) => `bc.cmdp.${partition}.>`,
  allPartitionedCommands: 'bc.cmdp.>',
  /** Core NATS, not stored: `commands` replicas announce themselves here to share the partitions out. */
  commandResponders: 'bc.ctl.commands.responders',
  /** Step work: `bc.work.<executor>.<stepId>`, e.g. `bc.work.control-plane.power.setPower`. */
  work: (executor: string, stepId: string) => `bc.work.${executor}.${stepId}`,
  /** Step work of one plugin, taken by its replicas' shared durable: `bc.work.plugin.acme-autoinstall.autoinstall.renderIso`. */
  pluginWork: (pluginId: string, stepId: string) => `bc.work.plugin.${pluginId}.${stepId}`,
  pluginWorkFilter: (pluginId: string) => `bc.work.plugin.${pluginId}.>`,
  /** Core request-reply: every live replica of a plugin answers (`plugins.list` liveness). */
  pluginPing: (pluginId: string) => `bc.plugin.${pluginId}.ping`,
  /** Commands for a site agent about one node's BMC: `bc.site.dc1.cmd.r1-n1`. */
  siteAgentCommands: (siteId: string, nodeId: string) => `bc.site.${siteId}.cmd.${nodeId}`,
  /** Everything a site agent consumes: its durable consumer's one filter. */
  siteAgentCommandFilter: (siteId: string) => `bc.site.${siteId}.cmd.>`,
  /** Commands for the ramdisk / node agent running inside one machine. */
  nodeAgentCommands: (siteId: string, nodeId: string) => `bc.site.${siteId}.node.${nodeId}.cmd`,
  /**
   * Core request-reply, not stored: an agent hands a signed result to the result intake (queue `result-intake`), which
   * answers with the stream's PubAck once it stored it on `acceptedAgentResult`, or an error naming why not. One
   * subject per command; the command's nonce is part of it, so nobody can address it before the command exists.
   */
  agentResult: (siteId: string, nodeId: string, commandId: string, nonce: string) => `bc.site.${siteId}.res.${nodeId}.${commandId}.${nonce}`,
  allAgentResults: 'bc.site.*.res.>',
  /**
   * A result the intake accepted (BC_AGENT_RESULTS): a command that was sent, signed by an agent it was for. Only
   * control-plane credentials publish here; agents direct-get their own. The waiting step reads exactly its answer.
   */
  acceptedAgentResult: (siteId: string, nodeId: string, commandId: string, nonce: string) => `bc.site.${siteId}.accepted.${nodeId}.${commandId}.${nonce}`,
  allAcceptedAgentResults: 'bc.site.*.accepted.>',
  /** Core NATS, not stored: an agent inside one machine says it is alive, or still running a command (`AgentHeartbeat`). */
  agentHeartbeat: (siteId: string, nodeId: string) => `bc.site.${siteId}.hb.${nodeId}`,
  allAgentHeartbeats: 'bc.site.*.hb.*',
  /**
   * One node's log lines from one source (`NodeLogLine`, BC_LOGS): `bc.site.dc1.log.r1-n1.ramdisk`. The broker lets a
   * site agent publish `site-agent` and `serial` lines for its own site's nodes, an agent inside a machine `ramdisk` and
   * `node-agent` lines for its own node only; the subject, not the line, says whose a line is.
   */
  nodeLog: (siteId: string, nodeId: string, source: string) => `bc.site.${siteId}.log.${nodeId}.${source}`,
  /** Every source of one node's log: what a reader of that node filters on. */
  nodeLogs: (siteId: string, nodeId: string) => `bc.site.${siteId}.log.${nodeId}.*`,
  /** One source's lines for every node of a site: what a site agent may publish (`site-agent`, `serial`). */
  siteNodeLogs: (siteId: string, source: string) => `bc.site.${siteId}.log.*.${source}`,
  allNodeLogs: 'bc.site.*.log.>',
  /** Control requests to a projector process (rebuild, status). */
  projectorControl: (projector: string, verb: 'rebuild' | 'status') => `bc.ctl.projector.${projector}.${verb}`,
  /** Core request-reply: an agent asks for a short-lived, encrypted grant of a secret it may use (queue `secret-grants`). */
  secretGrant: 'bc.secrets.grant',
  /** Every subject of the platform: what control-plane credentials may use. */
  all: 'bc.>',
  /** The node commands of one site, which the site agent watches for image sources: `bc.site.dc1.node.*.cmd`. */
  siteNodeAgentCommands: (siteId: string) => `bc.site.${siteId}.node.*.cmd`,
  /** Every result an agent of one site may publish: `bc.site.dc1.res.>`. */
  siteAgentResults: (siteId: string) => `bc.site.${siteId}.res.>`,
  /** Every result of one node's agent: `bc.site.dc1.res.r1-n1.>`. */
  nodeAgentResults: (siteId: string, nodeId: string) => `bc.site.${siteId}.res.${nodeId}.>`,
  /** The accepted results of one site's commands: what its site agent may direct-get (`bc.site.dc1.accepted.>`). */
  siteAcceptedResults: (siteId: string) => `bc.site.${siteId}.accepted.>`,
  /** The accepted results of one node's commands: what an agent inside it may direct-get. */
  nodeAcceptedResults: (siteId: string, nodeId: string) => `bc.site.${siteId}.accepted.${nodeId}.>`,
  /** A join request from a machine that holds no credentials yet, per role: `bc.join.node`. */
  join: (role: string) => `bc.join.${role}`,
  allJoins: 'bc.join.>',
  /** Core request-reply: a site agent asks for the single-use ramdisk join token of a machine's next boot (queue `join`). */
  bootJoinToken: 'bc.trust.bootToken',
  /**
   * Core request-reply: an agent registers its own key (queue `join`). The subject names the agent and its NATS user
   * key (`anonymous` without broker auth); an agent's credentials allow exactly its own, so the subject is who asks.
   */
  agentRegistration: (agentId: string, userPublicKey: string) => `bc.trust.register.${agentId}.${userPublicKey}`,
  allAgentRegistrations: 'bc.trust.register.*.*',
  /**
   * Core request-reply: an agent asks whether a rotation of its key is pending (`AgentKeyStatus`, queue `join`). Named
   * like its registration subject, so an agent's credentials allow exactly its own and the answer is about it alone.
   */
  agentKeyStatus: (agentId: string, userPublicKey: string) => `bc.trust.keyStatus.${agentId}.${userPublicKey}`,
  allAgentKeyStatuses: 'bc.trust.keyStatus.*.*',
  /** A message a consumer quarantined, one subject per consumer and stream position: `bc.dlq.projector_nodes.42`. */
  deadLetter: (consumer: string, streamSeq: number) => `bc.dlq.${consumer}.${streamSeq}`,
  /** The same entry once an operator marked it handled: kept, with who and when, never deleted through the API. */
  handledDeadLetter: (consumer: string, streamSeq: number) => `bc.dlq.${consumer}.${streamSeq}.handled`,
  /** The open (not yet handled) dead letters of one consumer, or of all (`consumer` undefined). */
  openDeadLetters: (consumer?: string) => `bc.dlq.${consumer ?? '*'}.*`,
  /** The handled dead letters of one consumer, or of all. */
  handledDeadLetters: (consumer?: string) => `bc.dlq.${consumer ?? '*'}.*.handled`,
  allDeadLetters: 'bc.dlq.>',
  /** One signal of a sensor pass (`BC_SIGNALS`): `bc.sig.signal.<passId>.<index>`. */
  passSignal: (passId: string, index: number) => `bc.sig.signal.${passId}.${index}`,
  /** Every signal of one pass: the filter the engine reads a pass's signals with. */
  passSignals: (passId: string) => `bc.sig.signal.${passId}.>`,
  /** The marker closing a pass (`PassMarker`): `bc.sig.pass.<passId>`. */
  passMarker: (passId: string) => `bc.sig.pass.${passId}`,
  /** The autonomy engine's durable consumer filter. */
  allPassMarkers: 'bc.sig.pass.>',
  /** The BMC monitor's latest probe of one node (`BmcObservation`, one kept per node): `bc.sig.obs.bmc.<nodeId>`. */
  bmcObservation: (nodeId: string) => `bc.sig.obs.bmc.${nodeId}`,
  allBmcObservations: 'bc.sig.obs.bmc.>',
  /** Core NATS, not stored: a `notify` disposition or an escalation for an owner's people (`bc.notify.<owner>`). */
  notify: (owner: string) => `bc.notify.${owner}`,
} as const;

/** The autonomy engine's durable consumer on `BC_SIGNALS` (pass markers), shared by every engine replica. */
export const AUTONOMY_ENGINE_DURABLE = 'autonomy_engine';

/** Durable consumers on BC_AGENT_COMMANDS, one per agent; the control plane creates them (with their filter). */
/** The durable consumer every replica of one plugin shares on BC_WORK. */
export const pluginDurable = (pluginId: string) => `plugin_${pluginId}`;

export const AgentDurables = {
  site: (siteId: string) => `site_${siteId}`,
  node: (agentId: string) => `ramdisk_${agentId}`,
} as const;

/**
 * Reply inboxes. Control-plane processes use the client default `_INBOX`; each agent gets its own prefix (the
 * client's `inboxPrefix` option) so it can be allowed to subscribe to its own replies and pulls and no one else's.
 */
export const Inboxes = {
  controlPlane: '_INBOX',
  allControlPlane: '_INBOX.>',
  agent: (agentId: string) => `_INBOX_${agentId}`,
  /**
   * Shared by every joiner (they hold one public credential, and nats-server 2.9 cannot give literal-only subscribe
   * rights): each join request uses an inbox of its own under it and its answer is sealed to a key of that request.
   */
  join: '_INBOX_join',
  /** An inspector (`broker creds --inspector`) makes no requests: it may neither publish nor read any inbox. */
  inspector: '_INBOX_inspector',
} as const;

/** The JetStream API subjects permissions are written against (server-defined, 2.9 and later). */
export const JetStreamApi = {
  all: '$JS.API.>',
  allAcks: '$JS.ACK.>',
  /** Flow control replies of push consumers. */
  allFlowControl: '$JS.FC.>',
  allAdvisories: '$JS.EVENT.>',
  consumerNext: (stream: string, durable: string) => `$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`,
  consumerInfo: (stream: string, durable: string) => `$JS.API.CONSUMER.INFO.${stream}.${durable}`,
  consumerAcks: (stream: string, durable: string) => `$JS.ACK.${stream}.${durable}.>`,
  /** Direct get of the last message on a subject (the subject travels in the API subject, so it can be scoped). */
  directGetLast: (stream: string, subject: string) => `$JS.API.DIRECT.GET.${stream}.${subject}`,
  /** Chunks and metadata of the step artefact object store (`bc_blobs`, see services/blobs/blobStore.ts). */
  blobObjects: '$O.bc_blobs.>',
  /** Writes to the leader lease bucket (`bc_leases`, see services/platform/lease/). */
  leaseKeys: '$KV.bc_leases.>',
} as const;

/** System-account requests (only a system-account user may send them). */
export const SystemApi = {
  /** Pushes a new account JWT to every server of a full resolver: revocations take effect without a restart. */
  claimsUpdate: '$SYS.REQ.CLAIMS.UPDATE',
} as const;

/** Stream names and the subjects each one captures. */
export const Streams = {
  events: { name: 'BC_EVENTS', subjects: ['bc.evt.>'] },
  /** Agent commands (kept 7 days: the audit of what reached which agent). */
  agentCommands: { name: 'BC_AGENT_COMMANDS', subjects: ['bc.site.*.cmd.>', 'bc.site.*.node.*.cmd'] },
  /**
   * Signed agent results the result intake accepted (`services/agents/resultIntake.ts`); agents publish to the intake,
   * never here. The control plane still verifies each before it counts.
   */
  agentResults: { name: 'BC_AGENT_RESULTS', subjects: ['bc.site.*.accepted.>'] },
  /** Step work for executors (work-queue retention: a message is gone once a worker acks it). */
  work: { name: 'BC_WORK', subjects: ['bc.work.>'] },
  /** Messages consumers quarantined instead of acting on (undecodable, or not written by the event store). */
  deadLetters: { name: 'BC_DEAD_LETTERS', subjects: ['bc.dlq.>'] },
  /** Sensor passes: signals, pass markers and the latest observations (kept a day, one message per subject). */
  signals: { name: 'BC_SIGNALS', subjects: ['bc.sig.>'] },
  /** Nodes' log lines from agents and serial consoles (limits: an age, lines per node and source, bytes in all). */
  logs: { name: 'BC_LOGS', subjects: ['bc.site.*.log.>'] },
} as const;

/**
 * JetStream buckets the platform declares beside its streams (a KV bucket is stream `KV_<name>`, an object store
 * `OBJ_<name>`); both take `BC_STREAM_REPLICAS` like the streams.
 */
export const Buckets = {
  /** Step artefacts (services/blobs/blobStore.ts). */
  blobs: { kind: 'object', name: 'bc_blobs' },
  /** Leader leases of the single-active services, one key per service (services/platform/lease/). */
  leases: { kind: 'kv', name: 'bc_leases' },
} as const;

/** Parses `bc.evt.<module>.<aggregate>.<id>` back into its parts; undefined for anything else. */
export function parseAggregateSubject(subject: string): { module: string; aggregate: string; id: string } | undefined {
  const parts = subject.split('.');
  if (parts.length !== 5 || parts[0] !== 'bc' || parts[1] !== 'evt') return undefined;
  return { module: parts[2]!, aggregate: parts[3]!, id: parts[4]! };
}
