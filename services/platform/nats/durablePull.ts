/**
 * Pull options for a consumer loop that must end when its durable is deleted under it (the owner then recreates it).
 *
 * The server answers a waiting pull with "409 Consumer Deleted", but a durable deleted before the first pull reaches
 * it leaves that pull unanswered: the client finds out only after two missed idle heartbeats and a consumer info.
 * The client checks for missed heartbeats on a timer of one heartbeat interval, and the first check can fall on the
 * boundary, so finding out takes two to three intervals. The client's defaults (30 s expiry, heartbeat half of it)
 * make that 30–45 s, past a lease period and an operator's patience; a 2.5 s heartbeat makes it 5–7.5 s, for one
 * small pull request per 10 s idle and a heartbeat per 2.5 s.
 */
export const DURABLE_PULL = { expires: 10_000, idle_heartbeat: 2_500, abort_on_missing_resource: true } as const;
