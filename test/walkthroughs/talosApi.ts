import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { buildIso9660 } from 'better-compute/sdk';

// A self-signed certificate the repo already ships for the BMC simulator: the Talos API is pinned, never trusted.
const certDir = new URL('../../daemon/simulator/bmc/certs/', import.meta.url);

/**
 * A stand-in for the Talos machine API on `host` (the address the test gave the machine's NIC): `GET
 * /machine/version` answers 503 until `booted()` says the machine runs the Talos CD, and to the first `bootingFor`
 * requests in any case (machined takes a while: the caller must keep polling), then 200 `{ version }`.
 */
export async function startTalosApi(host: string, booted: () => Promise<boolean>, options: { bootingFor?: number; version?: string } = {}) {
  const version = options.version ?? 'v1.8.3';
  const cert = readFileSync(new URL('bmc-sim-cert.pem', certDir));
  const key = readFileSync(new URL('bmc-sim-key.pem', certDir));
  const spkiSha256 = createHash('sha256')
    .update(new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64');
  const requests: { path: string; status: number }[] = [];
  const server = createHttpsServer({ cert, key }, (req, res) => {
    void (async () => {
      const asked = requests.filter((r) => r.path === '/machine/version').length;
      const up = req.url === '/machine/version' && req.method === 'GET' && asked >= (options.bootingFor ?? 0) && (await booted().catch(() => false));
      const status = req.url !== '/machine/version' ? 404 : up ? 200 : 503;
      requests.push({ path: req.url ?? '', status });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 200 ? JSON.stringify({ version }) : JSON.stringify({ error: status === 503 ? 'machined is not running yet' : 'not found' }));
    })();
  });
  await new Promise<void>((ready, fail) => {
    server.once('error', fail);
    server.listen(0, host, () => ready());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    host,
    port,
    spkiSha256,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** Serves a small ISO 9660 image with no autoinstall seed (the simulated machine boots it and stays on the CD). */
export async function startIsoServer() {
  const iso = buildIso9660({ volumeId: 'TALOS', files: [{ name: 'talos.txt', content: 'Talos Linux v1.8.3 (walkthrough stand-in)\n' }] });
  const server = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': iso.length });
    res.end(iso);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', () => ready()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/talos-v1.8.3-amd64.iso`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
