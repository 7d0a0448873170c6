#!/usr/bin/env bash
# NICFS POSIX conformance through the FUSE mount (pjdfstest, fsx with fixed seeds), then fsck.
# Run as root on a fresh Debian machine; .ci/run calls it after the workspace's fmt, clippy and
# tests (which cover the nicfs crates too):
#     bash nicfs/ci.sh
# Budget: about 6 minutes on 2 cores with a cold cache (most of it installing the tools; the
# figures take about 5 s).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORKSPACE="$(cd "$ROOT/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$WORKSPACE/target}"
PJDFSTEST_VERSION=0.2.2
FSX_VERSION=0.3.2
FSX_SEEDS="1 2"
FSX_OPS=20000

step() { printf '\n==> %s\n' "$*"; }

step "system packages"
if command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq fuse3 util-linux passwd >/dev/null
fi
[ -e /dev/fuse ] || mknod -m 666 /dev/fuse c 10 229
getent group nogroup >/dev/null || groupadd nogroup
getent passwd nobody >/dev/null || useradd -M -g nogroup -s /usr/sbin/nologin nobody
getent passwd tests >/dev/null || useradd -U -M -s /usr/sbin/nologin tests

step "conformance tools (pinned)"
command -v pjdfstest >/dev/null && pjdfstest --version | grep -q "$PJDFSTEST_VERSION" \
    || cargo install --locked pjdfstest --version "$PJDFSTEST_VERSION"
command -v fsx >/dev/null && fsx --version | grep -q "$FSX_VERSION" \
    || cargo install --locked fsx --version "$FSX_VERSION"

step "build the nicfs binary"
(cd "$WORKSPACE" && cargo build -p nicfs)

step "the paper's figures in virtual time (nicfs figure paper; twice: the same output)"
"$CARGO_TARGET_DIR/debug/nicfs" figure paper | tee /tmp/nicfs-figures.md
"$CARGO_TARGET_DIR/debug/nicfs" figure paper | cmp - /tmp/nicfs-figures.md

step "FUSE mount"
BIN="$CARGO_TARGET_DIR/debug/nicfs"
PM=/dev/shm/nicfs-ci
MNT=/mnt/nicfs-ci
SECONDARY=$(mktemp -d /tmp/nicfs-pjd-secondary.XXXX)
mkdir -p "$MNT"
mountpoint -q "$MNT" && umount "$MNT"
"$BIN" mkfs --pm "$PM" --size 256MiB
"$BIN" mount --pm "$PM" --with-daemon "$MNT" >/tmp/nicfs-ci-mount.log 2>&1 &
MOUNT_PID=$!
cleanup() {
    umount "$MNT" 2>/dev/null || fusermount3 -u "$MNT" 2>/dev/null || true
    wait "$MOUNT_PID" 2>/dev/null || true
    if [ -n "${DAEMON_PID:-}" ]; then kill "$DAEMON_PID" 2>/dev/null || true; fi
    rm -f "$PM" "$PM.comm"
    rm -rf "$SECONDARY"
}
trap cleanup EXIT
for _ in $(seq 50); do mountpoint -q "$MNT" && break; sleep 0.2; done
mountpoint -q "$MNT" || { cat /tmp/nicfs-ci-mount.log; exit 1; }

step "pjdfstest $PJDFSTEST_VERSION"
mkdir -p "$MNT/pjdfstest"
set +e
pjdfstest -c "$ROOT/conformance/pjdfstest.toml" -p "$MNT/pjdfstest" -s "$SECONDARY" >/tmp/nicfs-pjdfstest.log 2>&1
PJD_RC=$?
set -e
grep -E "FAILED|skipped" -A1 /tmp/nicfs-pjdfstest.log | grep -v -- '^--' || true
tail -n 1 /tmp/nicfs-pjdfstest.log
[ "$PJD_RC" -eq 0 ] || { echo "pjdfstest failed"; exit 1; }

step "fsx $FSX_VERSION: seeds $FSX_SEEDS, $FSX_OPS operations each"
FSX_PASS=0
for seed in $FSX_SEEDS; do
    if fsx -f "$ROOT/conformance/fsx.toml" -N "$FSX_OPS" -S "$seed" -P /tmp "$MNT/fsx.$seed"; then
        FSX_PASS=$((FSX_PASS + 1))
    else
        echo "fsx seed $seed failed"; exit 1
    fi
done
echo "fsx: $FSX_PASS passed, 0 failed"

step "a full file system: dd gets ENOSPC and the file holds exactly what dd was told was written"
set +e
dd if=/dev/zero of="$MNT/fill" bs=1M count=400 2>/tmp/nicfs-dd.log
DD_RC=$?
set -e
COPIED=$(grep -o '^[0-9]* bytes' /tmp/nicfs-dd.log | cut -d' ' -f1)
SIZE=$(stat -c %s "$MNT/fill")
echo "dd exit $DD_RC, reported $COPIED bytes, file holds $SIZE bytes"
if [ "$DD_RC" -eq 0 ] || [ "$COPIED" != "$SIZE" ] || ! grep -q "No space left" /tmp/nicfs-dd.log; then
    cat /tmp/nicfs-dd.log; exit 1
fi
rm "$MNT/fill"
if grep -q "nicfs-backend: .*rejected" /tmp/nicfs-ci-mount.log; then
    grep "nicfs-backend: .*rejected" /tmp/nicfs-ci-mount.log | head
    echo "the back end rejected acknowledged records"; exit 1
fi

step "fsck after the conformance runs"
umount "$MNT"
wait "$MOUNT_PID" || true
"$BIN" fsck --pm "$PM" --repair

step "a mount whose back end died holds the image: mkfs and fsck --repair refuse, a new daemon serves it"
"$BIN" daemon --pm "$PM" >/tmp/nicfs-ci-daemon.log 2>&1 &
DAEMON_PID=$!
for _ in $(seq 50); do [ -e "$PM.comm" ] && break; sleep 0.2; done
"$BIN" mount --pm "$PM" "$MNT" >>/tmp/nicfs-ci-mount.log 2>&1 &
MOUNT_PID=$!
for _ in $(seq 50); do mountpoint -q "$MNT" && break; sleep 0.2; done
mountpoint -q "$MNT" || { cat /tmp/nicfs-ci-mount.log; exit 1; }
echo kept >"$MNT/kept"
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
for cmd in "mkfs --pm $PM --size 256MiB" "fsck --repair --pm $PM"; do
    if RUST_BACKTRACE=1 "$BIN" $cmd 2>/tmp/nicfs-ci-refused.log; then
        echo "nicfs $cmd was not refused under a live mount"; exit 1
    fi
    grep -q "is mounted, by pid $MOUNT_PID" /tmp/nicfs-ci-refused.log \
        && [ "$(wc -l </tmp/nicfs-ci-refused.log)" -eq 1 ] \
        || { cat /tmp/nicfs-ci-refused.log; exit 1; }
done
"$BIN" daemon --pm "$PM" >>/tmp/nicfs-ci-daemon.log 2>&1 &
DAEMON_PID=$!
[ "$(cat "$MNT/kept")" = kept ] || { echo "the mount lost its file"; exit 1; }
umount "$MNT"
wait "$MOUNT_PID" || true
kill "$DAEMON_PID"
wait "$DAEMON_PID" || true
"$BIN" fsck --pm "$PM"

echo
echo "nicfs ci: all steps passed"
