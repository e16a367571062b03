# Shared set-up for the README's two commands. Sourced, not run.
# - installs the Debian packages the project needs (cmake, libclang for bindgen, ...),
# - obtains and builds HDF5 1.14 once (cached; $HDF5_DIR wins when it points at >= 1.14),
# - exports the environment the builds and tests use.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

H5PROV_T0=${H5PROV_T0:-$SECONDS}
# Each step prints the time since the script started and the disk left, so a CI log shows
# where its minutes and its space went.
step() {
    local free
    free=$(df -Pk "$ROOT" 2>/dev/null | awk 'NR == 2 { printf "%.1f GB free", $4 / 1048576 }')
    printf '\n\033[1m==> %s\033[0m  [%d s in, %s]\n' "$*" "$((SECONDS - H5PROV_T0))" "${free:-disk unknown}" >&2
}

need_pkgs() {
    local missing=()
    for p in "$@"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        command -v apt-get >/dev/null || { echo "error: need Debian packages ${missing[*]} and there is no apt-get" >&2; exit 1; }
        step "installing ${missing[*]}"
        apt-get update -qq >/dev/null || { echo "error: apt-get update failed (no network to the package registry?)" >&2; exit 1; }
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# cmake + a C compiler for HDF5; libclang for bindgen (h5prov-abigen's regeneration test);
# faketime pins HDF5's object timestamps in the byte-for-byte parity tests; Debian 12's own
# HDF5 1.10.8 runtime is the unsupported HDF5 that tests/tests/unsupported_hdf5.rs loads.
need_pkgs cmake libclang-dev dpkg-dev zlib1g-dev faketime libhdf5-103-1

step "HDF5 1.14 (bootstrap; cached after the first run)"
cargo run -q --release -p hdf5-test-harness -- build-hdf5
eval "$(cargo run -q --release -p hdf5-test-harness -- env)"
export HDF5_DIR

# The plugin directory HDF5 is pointed at: only libh5prov.so in it (HDF5 dlopens every
# lib*.so it finds there).
PLUGIN_DIR="$ROOT/.deps/plugins"

install_plugin() {
    # install_plugin [LIBRARY [DIR]]: by default the serial release build into $PLUGIN_DIR.
    local src="${1:-$ROOT/target/release/libh5prov.so}" dir="${2:-$PLUGIN_DIR}"
    mkdir -p "$dir"
    # Copy then rename: overwriting a mapped library would crash a running process.
    cp "$src" "$dir/.libh5prov.so.tmp"
    mv -f "$dir/.libh5prov.so.tmp" "$dir/libh5prov.so"
}
