import { erasedBytesOf, WipedDisk } from '../../schemas/agent/diskWipe.ts';

/**
 * The bytes a succeeded step's output says it moved, or null when it says none: a `disk.wipe` report's disks (bytes
 * each erase reached), an `image.write` result's `bytesWritten`. Read from the output's shape, not the step id, so a
 * plugin step that reports the same shapes counts too.
 */
export function bytesOf(output: unknown): number | null {
  if (typeof output !== 'object' || output === null) return null;
  const { disks, bytesWritten } = output as { disks?: unknown; bytesWritten?: unknown };
  if (Array.isArray(disks) && disks.length > 0) {
    let bytes = 0;
    for (const disk of disks) {
      const parsed = WipedDisk.safeParse(disk);
      if (!parsed.success) return null;
      bytes += erasedBytesOf(parsed.data);
    }
    return bytes;
  }
  return typeof bytesWritten === 'number' && Number.isSafeInteger(bytesWritten) && bytesWritten >= 0 ? bytesWritten : null;
}
