#!/bin/sh
# /init of the Better Compute ramdisk: modules, an address by DHCP, then `bcd ramdisk` with what the per-machine
# iPXE script put on the kernel line (bc.site, bc.node, bc.nats, bc.boot, bc.join, bc.joincreds, bc.disk).
export PATH=/usr/bin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp

# Without console= the kernel's console is the screen; a server's operator reads the serial port (serial over LAN).
case " $(cat /proc/cmdline) " in
  *" console="*) ;;
  *) [ -c /dev/ttyS0 ] && exec >/dev/ttyS0 2>&1 ;;
esac
say() { echo "bc-init: $*"; }
say "ramdisk /init started (kernel $(uname -r))"

for module in virtio_pci virtio_net virtio_blk virtio_rng button evdev; do
  modprobe "$module" || say "module $module did not load"
done
# The power button (Redfish GracefulShutdown) powers the machine off; nothing in a ramdisk needs an orderly stop.
acpid -c /etc/acpi -a /etc/acpid.conf

for word in $(cat /proc/cmdline); do
  case "$word" in
    bc.*=*)
      key="${word%%=*}"; key="bc_${key#bc.}"
      # Only plain names become variables: the value is assigned, never evaluated.
      case "$key" in *[!a-zA-Z0-9_]*) continue ;; esac
      eval "$key=\${word#*=}"
      ;;
  esac
done
hostname "bc-ramdisk-${bc_node:-unknown}"

ip link set lo up
address=""
for attempt in 1 2 3 4 5; do
  for dev in /sys/class/net/*; do
    iface="${dev##*/}"
    [ "$iface" = lo ] && continue
    ip link set "$iface" up
    # -n: give up instead of retrying forever; once bound, udhcpc stays in the background and renews the lease.
    if udhcpc -i "$iface" -s /etc/udhcpc.script -t 5 -T 2 -n -x "hostname:bc-ramdisk-${bc_node:-unknown}" >/dev/null; then
      address="$(ip -4 -o addr show dev "$iface" | awk '{print $4}')"
      break 2
    fi
  done
  say "no DHCP answer yet (attempt $attempt)"
  sleep 2
done
[ -n "$address" ] && say "address $address on $iface" || say "no address: bcd cannot reach the site"

disks=""
if [ -n "$bc_disk" ]; then
  for disk in $(echo "$bc_disk" | tr ',' ' '); do disks="$disks --disk $disk"; done
else
  for disk in /dev/vd[a-z]; do [ -b "$disk" ] && disks="$disks --disk $disk"; done
fi

mkdir -p /run/bcd
[ -n "$bc_joincreds" ] && export BC_JOIN_CREDS=/run/bcd/join.creds
# The site's agent may be down or restarting just as this machine boots (it is supervised, not always up): the
# credential is fetched before each start of bcd until the site has served it once.
join_credential() {
  [ -z "$bc_joincreds" ] || [ -s /run/bcd/join.creds ] && return 0
  wget -q -O /run/bcd/join.creds.part "$bc_joincreds" && mv /run/bcd/join.creds.part /run/bcd/join.creds
}
# The token goes through the environment: on the command line every process listing would show it.
[ -n "$bc_join" ] && export BC_JOIN_TOKEN="$bc_join"
unset bc_join

# Benchmarks only (`bcd site --ramdisk-args "bc.benchimage=<url> bc.benchsamples=<n>"`, npm run bench:site): the
# project's image write and wipe beside plain dd on the first disk, same bytes, same boot (/opt/bcd/ramdisk-bench.js).
if [ -n "$bc_benchimage" ]; then
  for disk in /dev/vd[a-z]; do
    [ -b "$disk" ] || continue
    node /opt/bcd/ramdisk-bench.js "$disk" "$bc_benchimage" "${bc_benchsamples:-2}" || say "bench failed with status $?"
    rm -f /tmp/bench-image.raw
    break
  done
fi

say "starting bcd ramdisk for node ${bc_node} of site ${bc_site}"
while true; do
  if join_credential; then
    node /opt/bcd/bcd.js ramdisk --site "$bc_site" --node "$bc_node" --nats "$bc_nats" --state /run/bcd \
      ${bc_boot:+--site-url "$bc_boot"} $disks
    say "bcd ramdisk exited with status $?; restarting in 5 s"
  else
    say "join credential not fetched from the site; trying again in 5 s"
  fi
  sleep 5
done
