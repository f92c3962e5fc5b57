#!/usr/bin/env bash
# The README's promise on a fresh machine: a clean Debian 12 made with debootstrap (a chroot under
# build-fresh/, git-ignored), a clone of this checkout's last commit in it, and nothing else; then
# the README's two commands as root, exactly as written:
#   bash scripts/test.sh                       sets itself up (apt) and must pass
#   bash scripts/run_example.sh                no GPU here: must say so and exit 2 within seconds
#   bash scripts/run_example.sh --simulated    must print kscope's table
#
#   sudo bash scripts/fresh_machine_check.sh [--no-cuda]
#
# With the CUDA toolkit in /usr/local/cuda it is bind-mounted there read-only, its libraries on the
# loader's path as NVIDIA's packages leave them ("with the CUDA 13 toolkit in /usr/local/cuda", as
# the README says); --no-cuda leaves it out (kscope built without CUDA). Needs root, debootstrap and network access to a Debian mirror (KSCOPE_DEBIAN_MIRROR).
# The downloaded packages are shared with this machine's apt cache; nothing else of this machine
# reaches the chroot. The Debian base is made once (build-fresh/base) and copied fresh for each run.
set -euo pipefail
# Read whole before it runs (the checkout may change while it does).
main() {
  cd "$(dirname "$0")/.."
  src=$PWD
  cuda=1
  [ "${1:-}" = --no-cuda ] && cuda=0
  mirror=${KSCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  top=$src/build-fresh
  base=$top/base
  root=$top/root
  log() { echo "[fresh] $(date +%H:%M:%S) $*"; }

  [ "$(id -u)" = 0 ] || { echo "run it as root (chroot, mount, debootstrap)" >&2; exit 1; }
  command -v debootstrap >/dev/null || { echo "needs debootstrap: apt-get install debootstrap" >&2; exit 1; }

  # Never delete through a mount that a killed run left behind (a chroot's /dev is this machine's).
  no_mounts_under() {
    if grep -q " $1/" /proc/mounts; then
      echo "$1 still has mounts (a run that was killed?): umount -R them first:" >&2
      grep " $1/" /proc/mounts | cut -d' ' -f2 >&2
      exit 1
    fi
  }

  mkdir -p "$top"
  if [ ! -x "$base/usr/bin/apt-get" ]; then
    log "debootstrap bookworm into $base"
    no_mounts_under "$base"
    rm -rf "$base"
    debootstrap --variant=minbase bookworm "$base" "$mirror" >"$top/debootstrap.log" 2>&1 ||
      { tail -20 "$top/debootstrap.log"; exit 1; }
  fi

  mounts=()
  cleanup() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R -l "${mounts[i]}" 2>/dev/null || true; done
  }
  trap cleanup EXIT
  bind() {  # bind SOURCE TARGET-IN-ROOT [ro]
    mkdir -p "$root$2"
    mount --bind "$1" "$root$2"
    mounts+=("$root$2")
    [ "${3:-}" = ro ] && mount -o remount,bind,ro "$root$2"
    return 0
  }

  no_mounts_under "$root"
  log "a fresh copy of the base in $root"
  rm -rf "$root"
  cp -a "$base" "$root"
  # What every machine has that debootstrap leaves out: its name service files.
  cp /etc/resolv.conf /etc/hosts "$root/etc/"
  commit=$(git rev-parse HEAD)
  log "cloning $commit ($(git log -1 --format=%s | cut -c1-70))"
  git clone -q --no-local "$src" "$root/work/kscope"
  git -C "$root/work/kscope" checkout -q --detach "$commit"

  mount -t proc proc "$root/proc" && mounts+=("$root/proc")
  # This machine's /dev and /sys with what is under them (pts, shm; the cgroup filesystem, which
  # slurmd needs), as slaves: nothing mounted or unmounted under the chroot's copies reaches this
  # machine's.
  local tree
  for tree in /dev /sys; do
    mount --rbind "$tree" "$root$tree" && mount --make-rslave "$root$tree" && mounts+=("$root$tree")
  done
  bind /var/cache/apt/archives /var/cache/apt/archives
  if (( cuda )) && [ -d /usr/local/cuda ]; then
    bind "$(readlink -f /usr/local/cuda)" /usr/local/cuda ro
    # As NVIDIA's packages install it: its libraries on the loader's path (an ld.so.conf entry).
    echo /usr/local/cuda/lib64 > "$root/etc/ld.so.conf.d/cuda.conf"
    chroot "$root" /sbin/ldconfig
    log "the CUDA toolkit of this machine at /usr/local/cuda (read-only, /usr/local/cuda/lib64 on the loader's path)"
  else
    log "no CUDA toolkit in the chroot"
  fi

  in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "cd /work/kscope && $1"
  }

  status=0
  log "bash scripts/test.sh"
  start=$SECONDS
  in_root "bash scripts/test.sh" >"$top/test.log" 2>&1 || status=$?
  log "bash scripts/test.sh: exit code $status after $(( (SECONDS - start) / 60 )) min; the end of its output:"
  tail -40 "$top/test.log"

  log "bash scripts/run_example.sh (no GPU here: exit code 2 expected within seconds)"
  start=$SECONDS
  rc=0
  in_root "bash scripts/run_example.sh" >"$top/example.log" 2>&1 || rc=$?
  tail -5 "$top/example.log"
  log "exit code $rc after $((SECONDS - start)) s"
  [ "$rc" = 2 ] || { log "FAIL: expected exit code 2"; status=1; }

  log "bash scripts/run_example.sh --simulated"
  if in_root "bash scripts/run_example.sh --simulated" >"$top/simulated.log" 2>&1; then
    grep -v '^\[ *[0-9]*%\]' "$top/simulated.log" | tail -16
  else
    tail -20 "$top/simulated.log"
    log "FAIL: run_example.sh --simulated"
    status=1
  fi
  log "done: $([ $status = 0 ] && echo PASS || echo FAIL)"
  exit $status
}
main "$@"
