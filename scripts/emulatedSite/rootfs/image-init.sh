#!/bin/sh
# /sbin/init of a host deployed from the Better Compute image: network by DHCP, then `bcd node`. The first boot
# joins with the seed the deploy wrote to the `bc-seed` partition; later boots resume the membership kept in
# /var/lib/bcd (the seed's single-use token is then spent, and is wiped).
export PATH=/usr/bin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
grep -q ' /dev ' /proc/mounts || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -o remount,rw /
case " $(cat /proc/cmdline) " in
  *" console="*) ;;
  *) [ -c /dev/ttyS0 ] && exec >/dev/ttyS0 2>&1 ;;
esac
say() { echo "bc-host: $*"; }
say "host /sbin/init started (kernel $(uname -r))"
for module in virtio_net virtio_rng button evdev vfat nls_cp437 nls_ascii nls_utf8 overlay; do modprobe "$module" || say "module $module did not load"; done
# The crun runtime (/opt/bcd/plugins/crun) needs the unified cgroup hierarchy, as a Debian 12 host has it, with the
# controllers the flavor limits use handed down to the containers' cgroups.
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup && echo "+cpu +memory +pids" > /sys/fs/cgroup/cgroup.subtree_control ||
  say "cgroup2 not ready: containers may not start"
acpid -c /etc/acpi -a /etc/acpid.conf

# The seed: key=value lines (bc-seed-v1) at the start of the partition labelled by its MBR type 0xda, NUL-padded.
seed_dev="$(fdisk -l /dev/vda 2>/dev/null | awk '$NF == "da" || /Non-FS data/ {print $1; exit}')"
[ -z "$seed_dev" ] && seed_dev=/dev/vda3
site=""; node=""; nats=""; token=""; creds=""
if [ -b "$seed_dev" ] && head -c 11 "$seed_dev" | grep -q '^bc-seed-v1'; then
  while IFS='=' read -r key value; do
    # Only known keys with values of the characters ids, URLs and tokens use; nothing is evaluated.
    case "$value" in *[!A-Za-z0-9_.,:/@%+=-]*) continue ;; esac
    case "$key" in
      site) site="$value" ;; node) node="$value" ;; nats) nats="$value" ;; token) token="$value" ;; joincreds) creds="$value" ;;
    esac
  done <<SEED
$(head -c 4096 "$seed_dev" | tr -d '\000')
SEED
fi
mkdir -p /var/lib/bcd
[ -f /var/lib/bcd/seed.env ] && . /var/lib/bcd/seed.env
[ -n "$site" ] && printf 'site=%s\nnode=%s\nnats=%s\n' "$site" "$node" "$nats" > /var/lib/bcd/seed.env
hostname "bc-node-${node:-unknown}"

ip link set lo up
for dev in /sys/class/net/*; do
  iface="${dev##*/}"; [ "$iface" = lo ] && continue
  ip link set "$iface" up
  udhcpc -i "$iface" -s /etc/udhcpc.script -t 10 -T 2 -n -x "hostname:bc-node-${node:-unknown}" >/dev/null && {
    say "address $(ip -4 -o addr show dev "$iface" | awk '{print $4}') on $iface"; break; }
done

# The deploy's user data (a NoCloud seed on the cidata partition): Debian's cloud-init, its four stages in the order
# its systemd units run them, beside bcd node so a failing or slow cloud-init never holds the node back. Its result
# goes to the console on one line (its own output goes there too, and to /var/log/cloud-init-output.log).
if [ -x /usr/bin/cloud-init ]; then
  (
    export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
    for stage in "init --local" "init" "modules --mode config" "modules --mode final"; do
      # shellcheck disable=SC2086 # the stage is words on purpose
      cloud-init $stage || say "cloud-init $stage exited with status $?"
    done
    say "cloud-init $(cloud-init status --long 2>&1 | tr '\n' ' ')"
    say "cloud-init result $(tr -d '\n' </run/cloud-init/result.json 2>/dev/null)"
    # Which user data this instance got, as a digest (never the data itself: it may hold secrets), so whoever
    # provided it can tell from the console that the host received exactly what was sent.
    [ -f /var/lib/cloud/instance/user-data.txt ] &&
      say "cloud-init user data sha256 $(sha256sum </var/lib/cloud/instance/user-data.txt | cut -d' ' -f1)"
  ) &
fi

if [ -z "$site" ] && [ -f /var/lib/bcd/seed.env ]; then . /var/lib/bcd/seed.env; fi
if [ -n "$token" ]; then
  export BC_JOIN_TOKEN="$token"
  [ -n "$creds" ] && export BC_JOIN_CREDS="$creds"
fi
unset token
say "starting bcd node for node ${node} of site ${site}"
first=1
while true; do
  node /opt/bcd/bcd.js node --site "$site" --node "$node" --nats "$nats" --state /var/lib/bcd --plugins /opt/bcd/plugins --privileged-plugin crun &
  bcd=$!
  # Once the membership exists the token is spent: wipe it from the seed partition and the environment.
  if [ "$first" = 1 ]; then
    for i in $(seq 1 120); do [ -f /var/lib/bcd/membership.json ] && break; sleep 1; done
    if [ -f /var/lib/bcd/membership.json ] && [ -b "$seed_dev" ]; then
      dd if=/dev/zero of="$seed_dev" bs=4096 count=1 conv=fsync 2>/dev/null && say "seed wiped after joining"
    fi
    unset BC_JOIN_TOKEN BC_JOIN_CREDS
    first=0
  fi
  wait "$bcd"
  say "bcd node exited with status $?; restarting in 5 s"
  sleep 5
done
