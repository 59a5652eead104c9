/**
 * Pull options for a consumer loop that must end when its durable is deleted under it (the owner then recreates it).
 *
 * The server answers a waiting pull with "409 Consumer Deleted", but a durable deleted before the first pull reaches
 * it leaves that pull unanswered: the client finds out only after two missed idle heartbeats and a consumer info.
 * The client's default 30 s pull expiry makes that 30 s, past a lease period and an operator's patience; 10 s
 * expiry (heartbeat every 5 s) bounds it to 10 s for one small pull request per 10 s idle.
 */
export const DURABLE_PULL = { expires: 10_000, abort_on_missing_resource: true } as const;
