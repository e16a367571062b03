#!/usr/bin/env bash
# The whole test suite: formatting and lints, unit and integration tests (real HDF5
# programs with libh5prov.so loaded, h5py and netCDF4 wheels from PyPI with their own HDF5
# 2.x, Parquet exports queried by DuckDB, Polars, pyarrow and Spark from PyPI), and HDF5's
# own regression suites natively, through HDF5's pass_through, through h5prov (also
# stacked, and tracing at level=element), on HDF5 1.14.5 (serial, parallel, thread-safe)
# and 2.2.0, always with the same libh5prov.so.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_pkgs chromium
# Spark (pyspark from PyPI, tests/tests/parquet.rs) runs on Java 17 or later.
need_pkgs openjdk-17-jre-headless
# tests/tests/stream.rs starts Debian's Prometheus on a loopback port to scrape
# `h5prov collect` while an MPI job streams to it.
need_pkgs prometheus
# tests/tests/top.rs runs `h5prov top` in a detached tmux session and reads its screen.
need_pkgs tmux
export H5PROV_REQUIRE_CHROMIUM=1

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy -q --workspace --all-targets -- -D warnings

step "building (debug for the tests, release for the harness)"
cargo build -q --workspace
cargo build -q --release -p h5prov
install_plugin

step "HDF5 2.2.0 (crates.io source, PyPI cmake; cached after the first run)"
# Needed by the tests below too: the ABI regeneration test reads its headers, and the
# two-HDF5 tests load it next to 1.14.5.
cargo run -q --release -p hdf5-test-harness -- build-hdf5 --variant v2

step "parallel HDF5 (OpenMPI; cached after the first run)"
# Needed by the tests below too: mpi_stderr.rs and mpi_broken_coll.rs run parallel programs
# under mpirun.
cargo run -q --release -p hdf5-test-harness -- build-hdf5 --variant parallel

step "thread-safe HDF5 1.14.5 (cached after the first run)"
# Needed by the tests below too: threads.rs runs 8 threads in it.
cargo run -q --release -p hdf5-test-harness -- build-hdf5 --variant threadsafe

step "Argobots 1.2 and vol-async 1.8.1 on the thread-safe HDF5 (../shared/vendor; cached after the first run)"
# Needed by tests/tests/async_vol.rs: h5prov over and under HDF5's async I/O connector.
# Argobots' autogen.sh needs autoconf, automake and libtool.
need_pkgs autoconf automake libtool
# tests/tests/async_vol.rs watches an asynchronous create's system calls with strace.
need_pkgs strace
cargo run -q --release -p hdf5-test-harness -- build-async

step "the h5prov wheel (maturin --zig, manylinux2014; cached per source tree)"
# Needed by tests/tests/wheel_user.rs, which installs it into a fresh venv as a user would;
# built here so that its time shows as a step of its own.
bash scripts/build-wheel.sh >/dev/null

step "cargo test (unit and integration tests)"
cargo test -q --workspace 2>&1 | tee "$ROOT/target/cargo-test.log" | grep -E '^(test result|running|failures|---- |thread )' || true
grep -q 'test result: FAILED' "$ROOT/target/cargo-test.log" && { tail -60 "$ROOT/target/cargo-test.log"; exit 1; }
grep -q 'error\[' "$ROOT/target/cargo-test.log" && { tail -60 "$ROOT/target/cargo-test.log"; exit 1; }

# The six connector modes: native, HDF5's pass_through, h5prov, h5prov over and under
# pass_through, and h5prov at level=element (traces to $2, capped per process).
six_modes() {
    local plugins="$1" traces="$2"
    shift 2
    rm -rf "$traces"
    cargo run -q --release -p hdf5-test-harness -- run "$@" \
        --plugin-path "$plugins" \
        --mode native --mode pass_through --mode h5prov \
        --mode h5prov-over-pt --mode pt-over-h5prov \
        --mode "h5prov-element=h5prov under_vol=0;under_info={};level=element;path=$traces;max_size=256M"
}

step "HDF5 regression suites: native, pass_through, h5prov"
six_modes "$PLUGIN_DIR" "$ROOT/target/harness-traces"

step "HDF5 2.2.0: HDF5 1.14.5's API suite built against it, native, pass_through, h5prov (the same libh5prov.so)"
six_modes "$PLUGIN_DIR" "$ROOT/target/harness-traces-v2" --variant v2

step "thread-safe HDF5 1.14.5: api and vol (with ttsafe): native, pass_through, h5prov (the same libh5prov.so)"
cargo run -q --release -p hdf5-test-harness -- run --variant threadsafe \
    --plugin-path "$PLUGIN_DIR" --suite api --suite vol \
    --mode native --mode pass_through --mode h5prov

PAR_PLUGIN_DIR="$ROOT/.deps/plugins-parallel"
# The same libh5prov.so: it binds to the parallel HDF5 at run time and finds its MPI-IO
# queries there.
install_plugin "$ROOT/target/release/libh5prov.so" "$PAR_PLUGIN_DIR"

step "testpar under mpirun -np 4: native, pass_through, h5prov"
six_modes "$PAR_PLUGIN_DIR" "$ROOT/target/harness-traces-parallel" --variant parallel

step "MPI VPIC/BDCATS-like runs through h5prov, analyzed (slowed rank named, transfer counts)"
cargo build -q --release -p h5prov-analyzer
cargo run -q --release -p hdf5-test-harness -- mpi-run --plugin-path "$PAR_PLUGIN_DIR" --check-transfers
step "done: the whole suite passed"
