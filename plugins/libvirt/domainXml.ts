/**
 * The domain XML the plugin defines (https://libvirt.org/formatdomain.html) and the little it reads back. The client
 * token rides in the domain's `<metadata>` under the plugin's own namespace (libvirt keeps such elements verbatim),
 * and the domain's UUID is derived from the token, so one token can only ever name one domain on a connection.
 */
import { createHash } from 'node:crypto';
import type { LibvirtFlavour } from './config.ts';

/** The namespace of the plugin's metadata element; its presence marks the domains the platform made. */
export const METADATA_NAMESPACE = 'https://better-compute.dev/xmlns/libvirt-instance/1';

/** Client tokens are put in XML attributes and names: only characters that need no escaping. */
export const TOKEN_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** A name-based UUID (RFC 9562 version 8, from SHA-256) of the token: create after create lands on the same domain. */
export function domainUuidOf(clientToken: string): string {
  const hex = createHash('sha256').update(`better-compute/libvirt/${clientToken}`).digest('hex').slice(0, 32).split('');
  hex[12] = '8';
  hex[16] = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The domain name: the platform's name made safe, plus 8 hex of the UUID, so two instances named alike do not clash. */
export function domainNameOf(name: string, uuid: string): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'bc';
  return `${base}-${uuid.slice(0, 8)}`;
}

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface DomainSpec {
  uuid: string;
  name: string;
  clientToken: string;
  flavour: LibvirtFlavour;
  /** A qcow2 image to boot from as a transient disk, or null for none. */
  image: string | null;
  network?: string;
  /** The NoCloud seed volume, attached as a read-only CD-ROM; absent when the guest gets nothing. */
  seed?: { pool: string; volume: string };
}

/**
 * A plain emulated PC (`type='qemu'`: TCG, so it also runs where there is no KVM), serial console only. It powers off
 * rather than rebooting on a guest shutdown, so a stop the guest asks for shows as `shut off`.
 */
export function domainXml(spec: DomainSpec): string {
  const disk =
    spec.image === null
      ? ''
      : `<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='${escapeXml(spec.image)}'/><target dev='vda' bus='virtio'/><transient/></disk>`;
  const seed =
    spec.seed === undefined
      ? ''
      : `<disk type='volume' device='cdrom'><driver name='qemu' type='raw'/><source pool='${escapeXml(spec.seed.pool)}' volume='${escapeXml(spec.seed.volume)}'/><target dev='sda' bus='sata'/><readonly/></disk>`;
  const nic = spec.network === undefined ? '' : `<interface type='network'><source network='${escapeXml(spec.network)}'/><model type='virtio'/></interface>`;
  return [
    `<domain type='qemu'>`,
    `<name>${escapeXml(spec.name)}</name>`,
    `<uuid>${spec.uuid}</uuid>`,
    `<title>${escapeXml(spec.clientToken)}</title>`,
    `<metadata><bc:instance xmlns:bc='${METADATA_NAMESPACE}' client-token='${escapeXml(spec.clientToken)}'/></metadata>`,
    `<memory unit='MiB'>${spec.flavour.memoryMib}</memory>`,
    `<vcpu>${spec.flavour.vcpus}</vcpu>`,
    `<os><type arch='x86_64' machine='pc'>hvm</type><boot dev='hd'/></os>`,
    `<on_poweroff>destroy</on_poweroff><on_reboot>restart</on_reboot><on_crash>destroy</on_crash>`,
    `<devices>${disk}${seed}${nic}<serial type='pty'/></devices>`,
    `</domain>`,
  ].join('\n');
}

/** The client token of a domain's XML (`virsh dumpxml`), or null when the platform did not make it. */
export function clientTokenOfXml(xml: string): string | null {
  const element = /<([A-Za-z0-9_-]+:)?instance\b[^>]*xmlns(:[A-Za-z0-9_-]+)?=['"]([^'"]+)['"][^>]*>/.exec(xml);
  if (!element || element[3] !== METADATA_NAMESPACE) return null;
  const token = /client-token=['"]([^'"]+)['"]/.exec(element[0])?.[1];
  return token !== undefined && TOKEN_PATTERN.test(token) ? token : null;
}
