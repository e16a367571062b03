#!/usr/bin/env bash
# Builds the `h5prov` wheel (manylinux2014: glibc 2.17) and prints its path on stdout.
# No HDF5 is needed. Cached in the cache root HDF5's builds use ($H5PROV_CACHE, else
# $XDG_CACHE_HOME/h5prov, else ~/.cache/h5prov), not in target/: CI works in a fresh clone,
# and the wheel's release build takes minutes. Under <cache>/wheel/:
#   tools/<key>   a venv with python/wheel-tools-requirements.txt (PyPI): maturin packs the
#                 wheel, ziglang links for glibc 2.17, cargo-zigbuild drives it for the
#                 plugin, auditwheel checks the tag; <key> hashes that file and the Python;
#   build/        the cargo target directory of both builds (incremental when sources change);
#   wheels/<key>  the wheel; <key> hashes every file (tracked or new, not ignored) the wheel
#                 is built from: the workspace manifests and lockfile, the analyzer,
#                 connector, format and bindings crates, python/, so an unchanged tree
#                 reuses it.
# libh5prov.so is built by cargo-zigbuild for x86_64-unknown-linux-gnu.2.17 and copied into
# python/h5prov/plugin/ (ignored by git); maturin --zig then builds the h5prov binary for
# the same glibc and packs both; `auditwheel show` must report manylinux_2_17.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { printf 'build-wheel: %s\n' "$*" >&2; }

CACHE="${H5PROV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/h5prov}/wheel"
PY="${H5PROV_PYTHON:-python3}"
REQ=python/wheel-tools-requirements.txt
tools_key=$( { cat "$REQ"; "$PY" -c 'import sys; print(sys.version, sys.executable)'; } | sha256sum | cut -c1-16)
TOOLS="$CACHE/tools/$tools_key"
# Complete when .done exists (venv scripts hold absolute paths, so it is built in place).
if [ ! -e "$TOOLS/.done" ]; then
    log "tools venv $TOOLS"
    rm -rf "$TOOLS"
    "$PY" -m venv "$TOOLS"
    "$TOOLS/bin/pip" install -q --only-binary=:all: -r "$REQ" >&2
    touch "$TOOLS/.done"
fi
export PATH="$TOOLS/bin:$PATH"

key=$( { git ls-files -co --exclude-standard -z -- Cargo.toml Cargo.lock .cargo analyzer \
             connector format bindings python | sort -z | xargs -0 sha256sum;
         echo "$tools_key"; } | sha256sum | cut -c1-16)
OUT="$CACHE/wheels/$key"
if wheel=$(ls "$OUT"/h5prov-*.whl 2>/dev/null | head -1) && [ -n "$wheel" ]; then
    log "cached $wheel"
    echo "$wheel"
    exit 0
fi

# One target directory for both builds, apart from the workspace's (other flags, other
# target). No debug info in the shipped binaries.
export CARGO_TARGET_DIR="$CACHE/build"
export CARGO_PROFILE_RELEASE_DEBUG=0
export CARGO_PROFILE_RELEASE_STRIP=symbols
start=$(date +%s)
log "libh5prov.so for glibc 2.17 (cargo zigbuild)"
cargo zigbuild -q --release -p h5prov --target x86_64-unknown-linux-gnu.2.17 >&2
mkdir -p python/h5prov/plugin
cp "$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/libh5prov.so" python/h5prov/plugin/libh5prov.so
log "h5prov binary and wheel (maturin --zig)"
rm -rf "$OUT.tmp"
# maturin reads python/pyproject.toml from its working directory (its manifest-path names
# the analyzer crate).
(cd python && maturin build -q --release --zig --compatibility manylinux2014 \
    --target x86_64-unknown-linux-gnu -o "$OUT.tmp" >&2)
wheel=$(ls "$OUT.tmp"/h5prov-*.whl)
log "auditwheel show"
show=$(auditwheel show "$wheel")
echo "$show" >&2
echo "$show" | grep -Eq 'manylinux_2_(17|28)_x86_64' || { log "error: $wheel is not manylinux 2_17 or 2_28"; exit 1; }
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
wheel="$OUT/$(basename "$wheel")"
log "built $wheel ($(stat -c %s "$wheel") bytes) in $(( $(date +%s) - start )) s"
echo "$wheel"
