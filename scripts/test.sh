#!/usr/bin/env bash
# The whole test suite: formatting and lints, unit and integration tests (real HDF5
# programs with libh5prov.so loaded), and HDF5's own regression suites natively, through
# HDF5's pass_through, through h5prov (also stacked, and tracing at level=element).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_pkgs chromium
export H5PROV_REQUIRE_CHROMIUM=1

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy -q --workspace --all-targets -- -D warnings

step "building (debug for the tests, release for the harness)"
cargo build -q --workspace
cargo build -q --release -p h5prov
install_plugin

step "cargo test (unit and integration tests)"
cargo test -q --workspace 2>&1 | tee "$ROOT/target/cargo-test.log" | grep -E '^(test result|running|failures|---- |thread )' || true
grep -q 'test result: FAILED' "$ROOT/target/cargo-test.log" && { tail -60 "$ROOT/target/cargo-test.log"; exit 1; }
grep -q 'error\[' "$ROOT/target/cargo-test.log" && { tail -60 "$ROOT/target/cargo-test.log"; exit 1; }

step "HDF5 regression suites: native, pass_through, h5prov"
TR="$ROOT/target/harness-traces"
rm -rf "$TR"
cargo run -q --release -p hdf5-test-harness -- run \
    --plugin-path "$PLUGIN_DIR" \
    --mode native --mode pass_through --mode h5prov \
    --mode h5prov-over-pt --mode pt-over-h5prov \
    --mode "h5prov-element=h5prov under_vol=0;under_info={};level=element;path=$TR"
