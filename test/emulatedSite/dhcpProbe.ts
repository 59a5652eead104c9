/**
 * A PXE client's first DHCP message from a given MAC, on a real network: run it in a namespace on the site's LAN
 *   ip netns exec <ns> node --import tsx test/emulatedSite/dhcpProbe.ts <mac> <listenMs>
 * It broadcasts a DHCPDISCOVER as a BIOS PXE ROM would (vendor class PXEClient, arch 0) and prints every reply to that
 * MAC as one JSON line: who answered, with which address, next-server and boot file.
 */
import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { DhcpMessageType, DhcpOption, encodeDhcpPacket, messageTypeOf, parseDhcpPacket } from '../../daemon/site/pxe/dhcpPacket.ts';

const [mac = '', listenMs = '4000'] = process.argv.slice(2);
const xid = randomInt(1, 0x7fffffff);
const options = new Map<number, Buffer>([
  [DhcpOption.MessageType, Buffer.from([DhcpMessageType.Discover])],
  [DhcpOption.VendorClass, Buffer.from('PXEClient:Arch:00000:UNDI:002001', 'latin1')],
  [93, Buffer.from([0, 0])],
  [55, Buffer.from([1, 3, 43, 60, 66, 67])],
]);
const discover = encodeDhcpPacket({
  op: 1,
  xid,
  secs: 0,
  flags: 0x8000,
  ciaddr: '0.0.0.0',
  yiaddr: '0.0.0.0',
  siaddr: '0.0.0.0',
  giaddr: '0.0.0.0',
  mac,
  sname: '',
  file: '',
  options,
});
const socket = createSocket({ type: 'udp4', reuseAddr: true });
socket.on('message', (msg, rinfo) => {
  try {
    const reply = parseDhcpPacket(msg);
    if (reply.op !== 2 || reply.xid !== xid) return;
    const bootfile = reply.options.get(DhcpOption.BootfileName)?.toString('latin1');
    process.stdout.write(
      `${JSON.stringify({ from: rinfo.address, type: messageTypeOf(reply), yiaddr: reply.yiaddr, siaddr: reply.siaddr, file: reply.file || bootfile || '' })}\n`,
    );
  } catch {
    // Not a DHCP reply: not ours to report.
  }
});
socket.bind(68, '0.0.0.0', () => {
  socket.setBroadcast(true);
  socket.send(discover, 67, '255.255.255.255');
  setTimeout(() => socket.close(), Number(listenMs));
});
