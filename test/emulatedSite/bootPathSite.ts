/**
 * The boot path of a site, alone, for the PXE spike: ProxyDHCP + TFTP (iPXE binaries) + a small HTTP server with
 * the per-machine iPXE script and the ramdisk. Run inside the site's network namespace:
 *   ip netns exec <ns> node --import tsx test/emulatedSite/bootPathSite.ts '<json config>'
 * Logs JSON lines on stdout; stops on SIGTERM.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { startPxeDhcp } from '../../daemon/site/pxe/proxyDhcp.ts';
import { startTftpServer } from '../../daemon/site/pxe/tftpServer.ts';
import { ramdiskIpxeScript } from '../../daemon/site/ipxeScript.ts';
import { createLogger } from '../../services/platform/logger.ts';

interface Config {
  siteIp: string;
  httpPort: number;
  tftpRoot: string;
  kernel: string;
  initrd: string;
  natsUrl: string;
  machines: { mac: string; nodeId: string; token: string }[];
}

const config = JSON.parse(process.argv[2]!) as Config;
const log = createLogger('boot-path-site', 'debug');
const baseUrl = `http://${config.siteIp}:${config.httpPort}`;
const byMac = new Map(config.machines.map((m) => [m.mac.toLowerCase(), m]));

const http = createServer((req, res) => {
  const path = req.url ?? '/';
  log.info({ path: path.replace(/\/[^/]+\.ipxe$/, '/<token>.ipxe') }, 'HTTP request');
  const machine = config.machines.find((m) => path === `/boot/${m.nodeId}/${m.token}.ipxe`);
  if (machine) {
    const script = ramdiskIpxeScript({ siteId: 'emu', nodeId: machine.nodeId, natsUrl: config.natsUrl, baseUrl, joinToken: 'bcj_spike_not-a-real-token' });
    res.writeHead(200, { 'content-type': 'text/plain' });
    return void res.end(script);
  }
  const file = path === '/ramdisk/vmlinuz' ? config.kernel : path === '/ramdisk/initrd.img' ? config.initrd : undefined;
  if (!file) return void res.writeHead(404).end('not found\n');
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': statSync(file).size });
  createReadStream(file).pipe(res);
});
await new Promise<void>((ok) => http.listen(config.httpPort, config.siteIp, () => ok()));
const tftp = await startTftpServer({ root: config.tftpRoot, address: config.siteIp, log });
const dhcp = await startPxeDhcp({
  serverIp: config.siteIp,
  knownMac: (mac) => byMac.get(mac),
  scriptUrl: (machine) => `${baseUrl}/boot/${machine.nodeId}/${machine.token}.ipxe`,
  log,
});
log.info({ dhcp: dhcp.ports, tftp: tftp.port, http: baseUrl }, 'boot path ready');

process.once('SIGTERM', () => {
  void Promise.all([dhcp.close(), tftp.close(), new Promise((ok) => http.close(ok))]).then(() => process.exit(0));
});
