import type { Finding } from '../../../schemas/doctor.ts';
import { Readiness, type ReadinessWarningCode } from '../../../schemas/health.ts';
import type { NodeView } from '../../../schemas/metal/views.ts';
import type { PluginView } from '../../../schemas/plugins/views.ts';
import type { SecretView } from '../../../schemas/secrets/views.ts';
import type { PoolView } from '../../../schemas/vps/views.ts';
import type { SiteView } from '../../../schemas/site/views.ts';
import { ApiClient, ApiError } from '../apiClient.ts';
import type { ClockSample } from './clockCheck.ts';
import { finding } from './finding.ts';

/** What the doctor learnt from the API for the checks that follow (sites, nodes, sealed key ids); undefined when it could not read them. */
export interface Fleet {
  sites: SiteView[];
  nodes: NodeView[];
  secretKeyIds: string[];
  pools: PoolView[];
  plugins: PluginView[];
}

export interface ApiReach {
  findings: Finding[];
  clock?: ClockSample;
  fleet?: Fleet;
}

/** Readiness warnings are insecure modes the operator chose: each is an error for the doctor. */
const warningFindings: Record<ReadinessWarningCode, { check: 'broker' | 'api'; code: 'BROKER_AUTH_OFF' | 'API_AUTH_OFF' }> = {
  BROKER_AUTH_OFF: { check: 'broker', code: 'BROKER_AUTH_OFF' },
  API_AUTH_OFF: { check: 'api', code: 'API_AUTH_OFF' },
};

/**
 * `/readyz` (open): the API answers, is ready, runs in no insecure mode, its read models are built and within
 * `maxLag`, nothing was dead-lettered; its Date header is a clock sample. Then, with the token, the fleet.
 */
export async function checkApi(apiUrl: string, token: string | undefined, maxLag: number): Promise<ApiReach> {
  let res: Response;
  try {
    res = await fetch(new URL('/readyz', apiUrl), { signal: AbortSignal.timeout(5_000) });
  } catch (err) {
    return {
      findings: [finding('api', 'API_UNREACHABLE', 'error', `the API does not answer at ${apiUrl}: ${String((err as Error).cause ?? err)}`, { apiUrl })],
    };
  }
  const date = res.headers.get('date');
  const clock: ClockSample | undefined = date ? { source: 'api', serverTimeMs: Date.parse(date), resolutionMs: 1_000 } : undefined;
  const parsed = Readiness.safeParse(await res.json().catch(() => undefined));
  if (!parsed.success)
    return {
      findings: [finding('api', 'API_UNREACHABLE', 'error', `${apiUrl}/readyz does not answer as a Better Compute API (status ${res.status})`, { apiUrl })],
      ...(clock ? { clock } : {}),
    };
  const readiness = parsed.data;
  const findings: Finding[] = [
    readiness.status === 'ready'
      ? finding('api', 'API_OK', 'info', `the API at ${apiUrl} is ready`, { apiUrl })
      : finding('api', 'API_NOT_READY', 'error', `the API at ${apiUrl} is not ready (NATS ${readiness.nats ? 'connected' : 'disconnected'})`, {
          apiUrl,
          nats: readiness.nats,
        }),
  ];
  for (const warning of readiness.warnings) {
    const { check, code } = warningFindings[warning.code];
    findings.push(finding(check, code, 'error', `the API reports: ${warning.message}`));
  }
  const missing = readiness.projections.filter((p) => p.checkpoint === null).map((p) => p.projection);
  const lagging = readiness.projections.filter((p) => p.lag !== null && p.lag > maxLag);
  for (const projection of missing)
    findings.push(finding('readModels', 'READ_MODEL_MISSING', 'error', `read model ${projection} is not built`, { projection }));
  for (const p of lagging)
    findings.push(
      finding('readModels', 'READ_MODEL_LAGGING', 'warning', `read model ${p.projection} is ${p.lag} events behind the log (bound ${maxLag})`, {
        projection: p.projection,
        lag: p.lag,
      }),
    );
  if (missing.length === 0 && lagging.length === 0) {
    const maxSeen = Math.max(0, ...readiness.projections.map((p) => p.lag ?? 0));
    findings.push(
      finding('readModels', 'READ_MODELS_OK', 'info', `${readiness.projections.length} read models, at most ${maxSeen} events behind`, { maxLag: maxSeen }),
    );
  }
  if ((readiness.deadLetters ?? 0) > 0)
    findings.push(
      finding('readModels', 'DEAD_LETTERS', 'warning', `${readiness.deadLetters} messages were moved to the dead-letter stream`, {
        deadLetters: readiness.deadLetters,
      }),
    );

  const fleet = await readFleet(new ApiClient(apiUrl, token)).catch((err: unknown) => {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      findings.push(
        finding(
          'api',
          'API_TOKEN_REFUSED',
          'warning',
          `the API refused the doctor's token (${err.code}): sites, BMCs and sealed secrets were not checked; pass --token or BC_API_TOKEN (admin)`,
        ),
      );
    }
    // Anything else (a read model not built yet, the API going away) is what the readiness findings above explain.
    return undefined;
  });
  return { findings, ...(clock ? { clock } : {}), ...(fleet ? { fleet } : {}) };
}

async function readFleet(api: ApiClient): Promise<Fleet> {
  const sites = (await api.get<{ items: SiteView[] }>('/v1/sites')).items;
  const nodes: NodeView[] = [];
  for (let cursor: string | null = ''; cursor !== null;) {
    const page: { items: NodeView[]; nextCursor: string | null } = await api.get(`/v1/nodes?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    nodes.push(...page.items);
    cursor = page.nextCursor;
  }
  const secretKeyIds = (await api.get<{ items: SecretView[] }>('/v1/secrets')).items.map((s) => s.keyId);
  const pools = (await api.get<{ items: PoolView[] }>('/v1/vps/pools')).items;
  const plugins = (await api.get<{ items: PluginView[] }>('/v1/plugins')).items;
  return { sites, nodes, secretKeyIds, pools, plugins };
}
