import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { Logger } from '../../../services/platform/logger.ts';
import type { AddressPool } from './addressPool.ts';
import { DhcpMessageType, DhcpOption, encodeDhcpPacket, messageTypeOf, parseDhcpPacket, type DhcpPacket } from './dhcpPacket.ts';
import { bootTargetFor, debianIpxeBinaries, dhcpNak, isPxeClient, pxeReply, type IpxeBinaries, type Lease } from './pxeAnswer.ts';
import { PxeError } from './pxeErrors.ts';

/** BOOTP flags bit 15 (RFC 2131 §2): the client can only receive broadcast replies. */
const BROADCAST_FLAG = 0x8000;

/** A machine the site knows by one of its MACs. */
export interface PxeNode {
  nodeId: string;
}

export interface PxeDhcpOptions<N extends PxeNode = PxeNode> {
  /** This server's address on the provisioning network: the ServerId, the TFTP next-server, the source of replies. */
  serverIp: string;
  /** The node a MAC belongs to; undefined for a stranger, which gets no answer at all. */
  knownMac: (mac: string) => N | undefined | Promise<N | undefined>;
  /** The node's HTTP iPXE script URL (per machine, secret), for clients already running iPXE. */
  scriptUrl: (node: N) => string | Promise<string>;
  binaries?: IpxeBinaries;
  /** Server mode: hand out addresses from this pool too. Unset: ProxyDHCP beside the network's DHCP server. */
  pool?: AddressPool;
  /** Where to listen for broadcasts (default 0.0.0.0). */
  listenAddress?: string;
  /** Ports and the broadcast address, overridable so tests run unprivileged on loopback. */
  ports?: { dhcp?: number; pxe?: number; client?: number };
  broadcastAddress?: string;
  log: Logger;
}

export interface PxeDhcpServer {
  ports: { dhcp: number; pxe: number };
  close(): Promise<void>;
}

function bind(socket: Socket, port: number, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ port, address, exclusive: false }, () => {
      socket.off('error', reject);
      resolve(socket.address().port);
    });
  });
}

/** The address a DHCPREQUEST asks to keep: option 50 while selecting, `ciaddr` when renewing. */
function requestedAddress(request: DhcpPacket): string | undefined {
  const option = request.options.get(DhcpOption.RequestedAddress);
  if (option?.length === 4) return [...option].join('.');
  return request.ciaddr !== '0.0.0.0' ? request.ciaddr : undefined;
}

/**
 * The site's DHCP face for network boot. ProxyDHCP (default): answers only PXE clients (vendor class `PXEClient`)
 * of known MACs, on port 67 (DISCOVER → OFFER without an address) and 4011 (REQUEST → ACK), with the boot file
 * only; the LAN's DHCP server gives the address. Server mode (`pool`): also gives known MACs their address, PXE or
 * not (an installed host renews through it). A malformed datagram or a stranger's is dropped and logged.
 */
export async function startPxeDhcp<N extends PxeNode>(options: PxeDhcpOptions<N>): Promise<PxeDhcpServer> {
  const { serverIp, log } = options;
  const binaries = options.binaries ?? debianIpxeBinaries;
  const listen = options.listenAddress ?? '0.0.0.0';
  const clientPort = options.ports?.client ?? 68;
  const broadcast = options.broadcastAddress ?? '255.255.255.255';
  const sockets: Socket[] = [];
  const open = () => {
    const socket = createSocket({ type: 'udp4', reuseAddr: true });
    sockets.push(socket);
    return socket;
  };

  const answer = async (request: DhcpPacket, onPxePort: boolean): Promise<{ reply: DhcpPacket; to: string; port: number } | undefined> => {
    if (request.op !== 1) return undefined;
    const type = messageTypeOf(request);
    if (type !== DhcpMessageType.Discover && type !== DhcpMessageType.Request) return undefined;
    const serverId = request.options.get(DhcpOption.ServerId);
    const toSomeoneElse = type === DhcpMessageType.Request && serverId?.length === 4 && [...serverId].join('.') !== serverIp;
    if (toSomeoneElse) return undefined;
    const node = await options.knownMac(request.mac);
    if (!node) {
      log.debug({ mac: request.mac }, 'DHCP from a MAC no node has: no answer');
      return undefined;
    }
    const pxe = isPxeClient(request);
    let lease: Lease | undefined;
    if (options.pool && !onPxePort) {
      lease = options.pool.leaseFor(request.mac);
      if (!lease) {
        log.warn({ mac: request.mac }, 'DHCP address pool is full');
        return undefined;
      }
      const wanted = requestedAddress(request);
      if (type === DhcpMessageType.Request && wanted !== undefined && wanted !== lease.address) {
        return { reply: dhcpNak(request, serverIp), to: broadcast, port: clientPort };
      }
    } else if (!pxe) {
      return undefined;
    } else if (!onPxePort && type === DhcpMessageType.Request && !serverId) {
      // A broadcast REQUEST naming no server belongs to the LAN's DHCP server, not to a proxy.
      return undefined;
    }
    const target = pxe ? bootTargetFor(request, binaries, await options.scriptUrl(node)) : undefined;
    if (pxe && !target) {
      log.warn({ mac: request.mac, nodeId: node.nodeId }, 'PXE client of an architecture the site has no iPXE binary for');
      if (!lease) return undefined;
    }
    const reply = pxeReply(request, { serverIp, target, ...(lease ? { lease } : {}) });
    log.info({ mac: request.mac, nodeId: node.nodeId, type, port: onPxePort ? 'pxe' : 'dhcp', boot: target?.kind, lease: lease?.address }, 'DHCP answered');
    if (request.giaddr !== '0.0.0.0') return { reply, to: request.giaddr, port: options.ports?.dhcp ?? 67 };
    if (request.ciaddr !== '0.0.0.0') return { reply, to: request.ciaddr, port: clientPort };
    return { reply, to: broadcast, port: clientPort };
  };

  const receiver = (onPxePort: boolean, sender: () => Socket) => (msg: Buffer, rinfo: RemoteInfo) => {
    let request: DhcpPacket;
    try {
      request = parseDhcpPacket(msg);
    } catch (err) {
      if (!(err instanceof PxeError)) throw err;
      log.debug({ from: rinfo.address, code: err.code, reason: err.message }, 'DHCP datagram refused');
      return;
    }
    answer(request, onPxePort).then(
      (out) => {
        if (!out) return;
        // On 4011 the reply goes back to the port the client used. A client that asks for broadcast replies (iPXE
        // does; it answers no ARP before its DHCP ends) or has no address yet only hears a broadcast.
        const wantsBroadcast = (request.flags & BROADCAST_FLAG) !== 0 || rinfo.address === '0.0.0.0';
        const to = onPxePort ? { address: wantsBroadcast ? broadcast : rinfo.address, port: rinfo.port } : { address: out.to, port: out.port };
        log.debug({ mac: request.mac, to: to.address, port: to.port }, 'DHCP reply');
        sender().send(encodeDhcpPacket(out.reply), to.port, to.address, (err) => {
          if (err) log.warn({ err, to: to.address }, 'DHCP reply not sent');
        });
      },
      (err: unknown) => log.warn({ err, mac: request.mac }, 'DHCP answer failed'),
    );
  };

  /**
   * Listens on `port`: broadcasts reach only a socket on the wildcard address; replies leave through one bound to
   * serverIp, which makes the kernel send a limited broadcast out of that address's interface.
   */
  const serve = async (port: number, onPxePort: boolean): Promise<number> => {
    const wildcard = open();
    const bound = await bind(wildcard, port, listen);
    let sender = wildcard;
    if (listen !== serverIp) {
      sender = open();
      await bind(sender, bound, serverIp);
      sender.on(
        'message',
        receiver(onPxePort, () => sender),
      );
    }
    sender.setBroadcast(true);
    wildcard.on(
      'message',
      receiver(onPxePort, () => sender),
    );
    return bound;
  };

  try {
    const dhcpPort = await serve(options.ports?.dhcp ?? 67, false);
    const pxePort = await serve(options.ports?.pxe ?? 4011, true);
    return {
      ports: { dhcp: dhcpPort, pxe: pxePort },
      close: async () => {
        await Promise.all(sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      },
    };
  } catch (err) {
    for (const socket of sockets) socket.close();
    throw err;
  }
}
