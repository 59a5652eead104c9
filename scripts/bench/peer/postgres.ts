import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** The database the bench creates (and drops) for itself when `BC_PEER_PG_URL` does not name one. */
const BENCH_DATABASE = 'bc_peer_bench';
/** Where the bench looks for a server when not told: this kind of machine runs PostgreSQL there with trust auth. */
const DEFAULT_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const TICKS = 100; // USER_HZ on Linux

export interface PeerDatabase {
  /** Connection string for emmett, without a password. */
  readonly url: string;
  readonly serverVersion: string;
  /** CPU seconds the whole PostgreSQL cluster used so far (postmaster, backends, WAL writer...); undefined off this host. */
  serverCpuSeconds(): number | undefined;
  /** Drops the database the bench created (nothing when it was given one). */
  release(): Promise<void>;
}

export type PeerDatabaseResult = { ok: true; db: PeerDatabase } | { ok: false; reason: string };

const redacted = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

/**
 * The PostgreSQL the emmett side runs on: `BC_PEER_PG_URL` as given (emmett creates its tables there), or else a fresh
 * `bc_peer_bench` database created on 127.0.0.1:5432 as `postgres` and dropped again by `release`. Never throws for a
 * server that is absent or refuses: the answer says why, so the bench can skip emmett and still measure ours.
 */
export async function openPeerDatabase(): Promise<PeerDatabaseResult> {
  const given = process.env.BC_PEER_PG_URL;
  const adminUrl = given ?? DEFAULT_ADMIN_URL;
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (err) {
    return { ok: false, reason: `no PostgreSQL answers at ${redacted(adminUrl)} (${(err as Error).message || String(err)})` };
  }
  try {
    const version = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
    const backendPid = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const postmaster = postmasterOf(backendPid);
    let url = adminUrl;
    if (!given) {
      // A fresh database per run: emmett's tables start empty, so runs compare, and nothing is left behind.
      await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DATABASE}`);
      await admin.query(`CREATE DATABASE ${BENCH_DATABASE}`);
      const target = new URL(adminUrl);
      target.pathname = `/${BENCH_DATABASE}`;
      url = target.toString();
    }
    await admin.end();
    return {
      ok: true,
      db: {
        url,
        serverVersion: version,
        serverCpuSeconds: () => (postmaster === undefined ? undefined : clusterCpuSeconds(postmaster)),
        release: async () => {
          if (given) return;
          const dropper = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
          await dropper.connect();
          // The contenders' pools end their idle clients asynchronously: a forced drop that kills one of them while
          // its pool still listens crashes the bench with an unhandled pool error after it wrote its results. Give
          // them a moment to go; force only what is left after that.
          for (let waited = 0; waited < 5_000 && (await otherSessions(dropper)) > 0; waited += 100) await sleep(100);
          await dropper.query(`DROP DATABASE IF EXISTS ${BENCH_DATABASE} WITH (FORCE)`);
          await dropper.end();
        },
      },
    };
  } catch (err) {
    await admin.end().catch(() => undefined);
    return { ok: false, reason: `PostgreSQL at ${redacted(adminUrl)} refused the bench's setup (${(err as Error).message || String(err)})` };
  }
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The postmaster that forked this backend, when the backend runs on this host (its /proc entry is a postgres). */
function postmasterOf(backendPid: number): number | undefined {
  try {
    if (readFileSync(`/proc/${backendPid}/comm`, 'utf8').trim() !== 'postgres') return undefined;
  } catch {
    return undefined;
  }
  const ppid = Number(statFields(backendPid)?.[1]);
  return Number.isInteger(ppid) && ppid > 1 ? ppid : undefined;
}

/**
 * CPU of the postmaster and every process it forked: the live ones' own time, plus the time of those that exited
 * (a backend closed meanwhile), which the kernel adds to the postmaster's children's time when it reaps them.
 */
function clusterCpuSeconds(postmaster: number): number | undefined {
  const own = statFields(postmaster);
  if (!own) return undefined;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS;
}

/** Sessions other than `client`'s own connected to the bench database. */
async function otherSessions(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
    BENCH_DATABASE,
  ]);
  return Number(rows[0]!.n);
}
