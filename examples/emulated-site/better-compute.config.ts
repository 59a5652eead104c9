// The emulated site's deployment config (docs/walkthroughs.md, walkthrough 4): its QEMU machines are a hardware profile.
import { defineConfig } from 'better-compute/config';

export default defineConfig({
  hardwareProfiles: {
    'emulated-redfish': {
      description: 'QEMU VMs behind the VM-backed Redfish BMC, network-booted by bcd site',
      drivers: { power: 'redfish', management: 'redfish', boot: 'ipxe', deploy: 'image-stream' },
    },
  },
});
