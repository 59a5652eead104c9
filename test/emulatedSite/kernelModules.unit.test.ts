import { describe, expect, it } from 'vitest';
import { moduleClosure, parseModulesDep } from '../../scripts/emulatedSite/kernelModules.ts';

const modulesDep = [
  'kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko',
  'kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko',
  'kernel/net/core/failover.ko:',
  'kernel/drivers/block/virtio_blk.ko:',
  'kernel/drivers/char/hw_random/virtio-rng.ko:',
  '',
].join('\n');

describe('kernel module closure', () => {
  it('takes each wanted module with everything it depends on, sorted', () => {
    expect(moduleClosure(parseModulesDep(modulesDep), ['virtio_net', 'virtio_blk'])).toEqual([
      'kernel/drivers/block/virtio_blk.ko',
      'kernel/drivers/net/net_failover.ko',
      'kernel/drivers/net/virtio_net.ko',
      'kernel/net/core/failover.ko',
    ]);
  });

  it('treats - and _ in module names alike, as modprobe does', () => {
    expect(moduleClosure(parseModulesDep(modulesDep), ['virtio_rng'])).toEqual(['kernel/drivers/char/hw_random/virtio-rng.ko']);
  });

  it('refuses a module the kernel does not have as a module', () => {
    expect(() => moduleClosure(parseModulesDep(modulesDep), ['ext4'])).toThrow(expect.objectContaining({ code: 'BUILD_FAILED' }));
  });
});
