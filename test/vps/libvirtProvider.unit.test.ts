import { describe, expect, it } from 'vitest';
import { providerManifestOf } from '../../plugins/sdk/providerManifest.ts';
import { accountShapeIssues } from '../../schemas/vps/providerAccountShape.ts';
import { libvirtProvider } from '../../plugins/libvirt/index.ts';
import { clientTokenOfXml, domainUuidOf, domainXml } from '../../plugins/libvirt/domainXml.ts';
import { classifyVirshFailure } from '../../plugins/libvirt/virsh.ts';

const flavour = { offerId: 'tiny', vcpus: 1, memoryMib: 64, diskGib: 1 };

describe('libvirt provider pieces', () => {
  it('registers its account shape: uri limited to the QEMU driver, images as absolute paths or null, unknown keys refused', () => {
    const shape = providerManifestOf(libvirtProvider).account!;
    expect(accountShapeIssues(shape, { region: 'rack-1' })).toEqual([]);
    expect(accountShapeIssues(shape, { region: 'rack-1', uri: 'qemu:///session', images: { none: null, base: '/var/lib/bc/base.qcow2' } })).toEqual([]);
    const paths = accountShapeIssues(shape, { region: 'rack-1', uri: 'xen:///system', images: { base: 'relative.qcow2' }, zone: 'a' }).map((i) => i.path);
    expect(paths.sort()).toEqual(['images.base', 'uri', 'zone']);
  });

  it('derives one RFC 9562 version 8 UUID per client token, and reads the token back only from its own namespace', () => {
    const uuid = domainUuidOf('bc-0123');
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(domainUuidOf('bc-0123')).toBe(uuid);
    expect(domainUuidOf('bc-0124')).not.toBe(uuid);
    const xml = domainXml({ uuid, name: 'web-1', clientToken: 'bc-0123', flavour, image: null });
    expect(xml).toContain(`<uuid>${uuid}</uuid>`);
    expect(xml).not.toContain('<disk');
    expect(xml).not.toContain('<interface');
    expect(clientTokenOfXml(xml)).toBe('bc-0123');
    // As libvirt gives it back in `virsh dumpxml`, and a domain somebody else tagged with the same element name.
    expect(clientTokenOfXml(`<metadata>\n  <bc:instance xmlns:bc="https://better-compute.dev/xmlns/libvirt-instance/1" client-token="bc-0123"/>`)).toBe(
      'bc-0123',
    );
    expect(clientTokenOfXml(`<metadata><x:instance xmlns:x="https://example.org/other" client-token="bc-0123"/></metadata>`)).toBeNull();
    expect(clientTokenOfXml('<domain type="qemu"><name>mine</name></domain>')).toBeNull();
  });

  it("maps libvirt's messages to error kinds, without virsh's prefixes", () => {
    expect(classifyVirshFailure("error: failed to get domain '5d0c'\n")).toMatchObject({ kind: 'not-found', message: "libvirt: failed to get domain '5d0c'" });
    const noDaemon = "error: failed to connect to the hypervisor\nerror: Failed to connect socket to '/run/x': No such file or directory\n";
    expect(classifyVirshFailure(noDaemon)).toMatchObject({ kind: 'configuration', code: 'PROVIDER_CONFIGURATION' });
    expect(classifyVirshFailure('error: failed to connect to the hypervisor\nerror: Connection refused\n')).toMatchObject({ kind: 'transient' });
    expect(classifyVirshFailure('error: Requested operation is not valid: domain is not running\n')).toMatchObject({ kind: 'rejected' });
  });
});
