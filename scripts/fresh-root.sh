#!/usr/bin/env bash
# The test of set-up: a newcomer's machine, made here. A minimal Debian 12 root (debootstrap's minbase) that holds
# only ca-certificates, git, and this machine's Node and npm, as root. The checkout's committed HEAD is cloned into
# it and the README's "Set up" block is run there: its first command (the demo), and with --tests its second (the
# tests). The root is built once and kept as a tarball in the cache; every run unpacks it anew into a directory
# of its own, removed at the end, so no run sees what another left, and runs can go side by side.
#
#   scripts/fresh-root.sh [CHECKOUT] [--tests]
#
# Each command's output goes to a log of the run's own in the cache (the path is printed); the last line is
# "fresh machine: N passed, M failed", and the exit status is 0 only when none failed.
set -uo pipefail

checkout=$(cd "${1:-.}" && pwd) || exit 2
with_tests=${2:-}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/istio-job-run-fresh-root
base=$cache/base.tar
run=$(date -u +%Y%m%dT%H%M%S)-$$
root=$cache/root-$run
logs=$cache/log/$run
mkdir -p "$logs" || exit 2

verdict() { echo "fresh machine: $1 passed, $2 failed"; }
give_up() { echo "fresh-root: $*"; verdict 0 1; exit 1; }

# Debian's debootstrap, from the mirror this machine's apt uses.
make_base() {
  if ! command -v debootstrap >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } >"$logs/apt" 2>&1 ||
      give_up "debootstrap is missing and apt-get could not install it (see $logs/apt)"
  fi
  local mirror
  mirror=$(awk '$1 == "URIs:" { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
  local made=$cache/made-$run
  rm -rf "$made" && mkdir -p "$made"
  debootstrap --variant=minbase --include=ca-certificates,git bookworm "$made" ${mirror:+"$mirror"} >"$logs/debootstrap" 2>&1 ||
    give_up "debootstrap failed (see $logs/debootstrap)"
  # This machine's Node and npm, and nothing else of it.
  local node npm_dir
  node=$(readlink -f "$(command -v node)") || give_up "no node on PATH"
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  install -D -m 0755 "$node" "$made/opt/node/bin/node"
  mkdir -p "$made/opt/node/lib/node_modules"
  cp -a "$npm_dir" "$made/opt/node/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$made/opt/node/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$made/opt/node/bin/npx"
  [[ -f /etc/apt/sources.list.d/debian.sources ]] && cp /etc/apt/sources.list.d/debian.sources "$made/etc/apt/sources.list.d/"
  # Written aside and renamed: a run beside this one never reads half a tarball.
  tar -C "$made" -cf "$base.$run" . && mv "$base.$run" "$base" || give_up "cannot write $base"
  rm -rf "$made"
}

# A root with the machine's /dev or /sys still bound inside is never removed.
unmount_all() { umount -R -l "$root" 2>/dev/null; }
still_mounted() { grep -q " $root[/ ]" /proc/self/mountinfo; }

bound=()
release() { local i; for ((i = ${#bound[@]} - 1; i >= 0; i--)); do umount -R -l "${bound[i]}" 2>/dev/null; done; }
# What still runs inside the root (a daemon a test started, an apt the timeout did not reach) would write into it
# while it is removed: it is stopped first.
stop_inside() {
  local link
  for link in /proc/[0-9]*/root; do
    [[ $(readlink "$link" 2>/dev/null) == "$root"* ]] && kill -KILL "${link:6:-5}" 2>/dev/null
  done
}
# The run's root goes with it, never while anything of the machine is still bound inside.
remove_root() {
  stop_inside
  release
  unmount_all
  if still_mounted; then echo "fresh-root: $root still has mounts: not removing it"; else rm -rf "$root"; fi
}
trap remove_root EXIT

[[ -f $base ]] || make_base
mkdir -p "$root" && tar -C "$root" -xf "$base" || give_up "cannot unpack $base"
cp /etc/resolv.conf "$root/etc/resolv.conf"
[[ -f /etc/npmrc ]] && cp /etc/npmrc "$root/etc/npmrc"

# The command lines of the README's "Set up" block: the first fenced block after a heading that says set up.
mapfile -t commands < <(
  awk 'tolower($0) ~ /^#+ .*set ?up/ { heading = 1 }
       heading && /^```/ { fences++; if (fences == 2) exit; next }
       heading && fences == 1' "$checkout/README.md" | sed 's/[[:space:]]#.*$//' | grep -v '^[[:space:]]*$'
)
((${#commands[@]} > 0)) || give_up "README.md has no command block under a \"Set up\" heading"
git clone -q "$checkout" "$root/root/project" || give_up "cannot clone $checkout"

# The root as a machine has it: a mount point of its own (private propagation works in it), /proc, and /dev and
# /sys with what is under them (cgroups, ptys); this machine's certificates for the registry.
bind() { # SOURCE TARGET [MOUNT-OPTION]
  mkdir -p "$root$2"
  mount "${3:---bind}" "$1" "$root$2" && bound+=("$root$2")
}
mount --bind "$root" "$root" && bound+=("$root")
bind /proc /proc
bind /dev /dev --rbind
bind /sys /sys --rbind
bind /etc/ssl /etc/ssl
[[ -d /usr/local/share/ca-certificates ]] && bind /usr/local/share/ca-certificates /usr/local/share/ca-certificates
if [[ -f $HOME/.npmrc ]]; then
  touch "$root/root/.npmrc"
  mount --bind "$HOME/.npmrc" "$root/root/.npmrc" && bound+=("$root/root/.npmrc")
fi
trust=()
for name in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR; do
  case ${!name:-} in /etc/ssl/* | /usr/local/share/ca-certificates/*) trust+=("$name=${!name}") ;; esac
done

passed=0
failed=0
# A hang ends the run at this bound (seconds) instead of stalling it; it leaves room for runs side by side on a
# busy machine, which can take twice as long as one run alone.
step_bound=3000
step() { # NAME COMMAND
  local started=$SECONDS
  if timeout "$step_bound" chroot "$root" /usr/bin/env -i "${trust[@]}" HOME=/root TERM=dumb \
    PATH=/opt/node/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /root/project && $2" >"$logs/$1" 2>&1 </dev/null; then
    echo "ok   $1 ($((SECONDS - started)) s): $2"
    passed=$((passed + 1))
  else
    echo "FAIL $1 ($((SECONDS - started)) s): $2 (log: $logs/$1)"
    grep -v '^[[:space:]]*at ' "$logs/$1" | tail -n 8 | sed 's/^/     /'
    failed=$((failed + 1))
  fi
}
step demo "${commands[0]}"
[[ $with_tests == --tests && ${#commands[@]} -ge 2 ]] && step tests "${commands[1]}"
verdict "$passed" "$failed"
((failed == 0))
