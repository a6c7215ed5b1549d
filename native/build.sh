#!/usr/bin/env bash
# Builds native/chaind-native.linux-x64-gnu.node offline (see native/README.md).
#
#   bash native/build.sh            # from anywhere
#
# Exit status is 0 even when the addon cannot be built: chaind then runs on the JS backend
# (src/crypto/js.ts), and a line starting "chaind-native: WARNING" says why. Only a broken
# script (a bug here) exits non-zero. Set CHAIND_NATIVE_STRICT=1 to turn the warnings into
# failures, e.g. in a CI job that must prove the native path.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
OUT="$HERE/chaind-native.linux-x64-gnu.node"
START=$(date +%s)

warn() {
  echo "chaind-native: WARNING: $*; chaind will use the JS crypto backend" >&2
  if [ "${CHAIND_NATIVE_STRICT:-0}" = "1" ]; then exit 1; fi
  exit 0
}

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  warn "only linux-x64-gnu is set up (this is $(uname -s)-$(uname -m))"
fi

# (a) Debian packages. The two librust-*-dev packages unpack the crates into
# /usr/share/cargo/registry, which native/.cargo/config.toml uses in place of crates.io;
# libsecp256k1-dev brings the headers' library (and libsecp256k1-1, needed at run time).
PKGS=(librust-tiny-keccak-dev librust-sha2-dev libsecp256k1-dev)
missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    warn "missing ${missing[*]} and no apt-get"
  fi
  SUDO=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else warn "missing ${missing[*]} and not root"; fi
  fi
  echo "chaind-native: installing ${missing[*]}"
  # Refresh the package lists only when something is missing: an update costs ~5-20 s.
  $SUDO apt-get update -qq >/dev/null 2>&1 || warn "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || warn "apt-get install ${missing[*]} failed"
fi

command -v cargo >/dev/null 2>&1 || warn "cargo not found"

# (b) Build. The napi CLI only wraps `cargo build` here (no napi-derive, so it generates no
# index.js/.d.ts; src/crypto/native.ts is the loader) and names the output for the platform.
cd "$HERE" || warn "cannot cd to $HERE"
NAPI="$ROOT/node_modules/.bin/napi"
built=0
if [ -x "$NAPI" ]; then
  if "$NAPI" build --platform --release; then
    built=1
  else
    echo "chaind-native: napi build failed, retrying with cargo directly" >&2
  fi
fi
if [ "$built" = "0" ]; then
  cargo build --release --offline || warn "cargo build failed"
  # (c) Copy the cdylib under the name the loader expects.
  cp -f "$HERE/target/release/libchaind_native.so" "$OUT" || warn "copy of the built library failed"
fi
[ -f "$OUT" ] || warn "build produced no $OUT"

# Smoke test: load it the way chaind does (in a worker thread too) and hash "abc".
if ! node -e '
  const { Worker } = require("node:worker_threads");
  const p = process.argv[1];
  const m = require(p);
  const want = "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45";
  if (m.keccak256(Buffer.from("abc")).toString("hex") !== want) throw new Error("keccak256(abc) mismatch");
  const w = new Worker("const m = require(process.argv[2]); require(\"node:worker_threads\").parentPort.postMessage(m.keccak256(Buffer.from(\"abc\")).toString(\"hex\"))", { eval: true, argv: [p] });
  w.once("message", (h) => { if (h !== want) { console.error("worker mismatch"); process.exitCode = 1 } w.terminate() });
  w.once("error", (e) => { console.error(e); process.exitCode = 1 });
' "$OUT"; then
  warn "built $OUT but it does not load"
fi

echo "chaind-native: built $OUT in $(( $(date +%s) - START )) s"
