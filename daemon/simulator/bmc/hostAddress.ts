import type { BmcSimulator } from './simulator.ts';
import { touch, type Json } from './treeStore.ts';

const memberUris = (doc: Json | undefined): string[] =>
  (Array.isArray(doc?.Members) ? doc.Members : []).flatMap((m) =>
    typeof m === 'object' && m !== null && typeof (m as Json)['@odata.id'] === 'string' ? [(m as Json)['@odata.id'] as string] : [],
  );

/**
 * Shows `address` as the host's IPv4 address on the system's first EthernetInterface, the way a BMC reports the
 * running OS's DHCP lease: what an inspection then records as a node address (an agentless OS's API endpoint).
 * Returns false when the tree has no system NIC to put it on.
 */
export function setHostAddress(bmc: Pick<BmcSimulator, 'resource'>, address: string): boolean {
  const system = bmc.resource(memberUris(bmc.resource('/redfish/v1/Systems'))[0] ?? '');
  const nicsLink = (system?.EthernetInterfaces as Json | undefined)?.['@odata.id'];
  if (typeof nicsLink !== 'string') return false;
  const nic = bmc.resource(memberUris(bmc.resource(nicsLink))[0] ?? '');
  if (!nic) return false;
  // Documents are live: mutating one changes what the next GET answers (and its ETag, where the tree keeps one).
  nic.IPv4Addresses = [{ Address: address, SubnetMask: '255.255.255.0', AddressOrigin: 'DHCP' }];
  touch(nic);
  return true;
}
