/**
 * Probe: CPU per user JWT a join signs (`issueUserJwt`: the revocation check, the claims, the signature), this tree's
 * against another checkout's (`BENCH_BASE_DIR`, e.g. a `git archive main` of the code before), alternating rounds on
 * one broker directory. `BENCH_BASE_DIR=/tmp/base npx tsx scripts/bench/probe/joinJwtCost.ts [jwts] [revocations]`
 */
import { createUser } from '@nats-io/nkeys';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateBrokerMaterial } from '../../../services/trust/broker/brokerMaterial.ts';
import { issueUserJwt } from '../../../services/trust/broker/userCredentials.ts';

type Variant = { name: string; material: unknown; issue: (material: unknown, key: string) => Promise<unknown> };
const count = Number(process.argv[2] ?? 300);
const revoked = Number(process.argv[3] ?? 0);
const dir = mkdtempSync(join(tmpdir(), 'bc-join-jwt-'));
const own = await loadOrCreateBrokerMaterial(dir);
// An account that revoked keys before (agents re-joined, hosts left): its JWT is what every issue checks.
const revocations = Object.fromEntries(Array.from({ length: revoked }, () => [createUser().getPublicKey(), Math.floor(Date.now() / 1000)]));
if (revoked > 0) await own.reissueAppAccount((claims) => ({ ...claims, revocations }));
const grant = { role: 'node', agentId: 'rd-n1-k', siteId: 's1', nodeId: 'n1' } as const;
const variants: Variant[] = [{ name: 'this tree', material: await loadOrCreateBrokerMaterial(dir), issue: (m, k) => issueUserJwt(m as typeof own, k, grant) }];
const base = process.env.BENCH_BASE_DIR;
if (base) {
  const baseMaterial = (await import(join(base, 'services/trust/broker/brokerMaterial.ts'))) as {
    loadOrCreateBrokerMaterial: typeof loadOrCreateBrokerMaterial;
  };
  const baseIssue = (await import(join(base, 'services/trust/broker/userCredentials.ts'))) as { issueUserJwt: typeof issueUserJwt };
  const material = await baseMaterial.loadOrCreateBrokerMaterial(dir);
  variants.unshift({ name: `base ${base}`, material, issue: (m, k) => baseIssue.issueUserJwt(m as typeof own, k, grant) });
}
const keys = Array.from({ length: count }, () => createUser().getPublicKey());
const samples = new Map<string, number[]>();
for (let round = 0; round < 5; round++) {
  for (const v of variants) {
    const start = process.cpuUsage();
    for (const key of keys) await v.issue(v.material, key);
    const used = process.cpuUsage(start);
    samples.set(v.name, [...(samples.get(v.name) ?? []), (used.user + used.system) / count]);
  }
}
console.log(`${count} user JWTs per round, ${revoked} revocations in the account, load ${(await import('node:os')).loadavg()[0]!.toFixed(2)}`);
for (const [name, s] of samples) {
  const sorted = [...s].sort((a, b) => a - b);
  console.log(`${name.padEnd(24)} median ${sorted[2]!.toFixed(0).padStart(6)} µs CPU per JWT (rounds: ${s.map((x) => x.toFixed(0)).join(', ')})`);
}
