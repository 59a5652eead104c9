#!/bin/sh
# /init of the installed image's early initramfs: load the virtio disk driver, mount the root partition
# (label bc-root), and hand over to its /sbin/init.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
modprobe virtio_pci
modprobe virtio_blk
mkdir -p /newroot
for attempt in 1 2 3 4 5 6 7 8 9 10; do
  root="$(findfs LABEL=bc-root 2>/dev/null)"
  [ -n "$root" ] && mount -t ext4 "$root" /newroot && break
  sleep 1
done
if ! grep -q ' /newroot ' /proc/mounts; then
  echo "bc-boot: no bc-root partition; dropping to a shell"
  exec sh
fi
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/init
