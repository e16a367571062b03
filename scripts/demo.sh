#!/usr/bin/env bash
# The main job on embedded defaults: build everything, run a sample HDF5 workload with
# h5prov loaded, and print the analyzer's report.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

step "building libh5prov.so and the h5prov analyzer"
cargo build -q --release -p h5prov -p h5prov-analyzer
install_plugin

step "building the sample workload"
OUT="$ROOT/target/demo"
rm -rf "$OUT" && mkdir -p "$OUT/data"
bash workloads/build.sh "$OUT/bin" >/dev/null

step "running the sample workload as 4 processes with h5prov loaded"
TRACES="$OUT/traces"
export HDF5_PLUGIN_PATH="$PLUGIN_DIR"
export HDF5_VOL_CONNECTOR="h5prov under_vol=0;under_info={};path=$TRACES;level=dataset"
pids=()
for r in 0 1 2 3; do
    PMI_RANK=$r PMI_SIZE=4 "$OUT/bin/sample" -d "$OUT/data" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
"$OUT/bin/vpic_write" -d "$OUT/data" -p 200000 -t 2 >/dev/null
"$OUT/bin/bdcats_read" -d "$OUT/data" >/dev/null
unset HDF5_VOL_CONNECTOR HDF5_PLUGIN_PATH
ls "$TRACES" | grep -q '\.meta\.json$' || { echo "error: h5prov wrote no trace: the connector was not loaded" >&2; exit 1; }

step "h5prov report $TRACES"
"$ROOT/target/release/h5prov" report "$TRACES" --html "$OUT/report.html"
echo
echo "HTML report: $OUT/report.html   Perfetto: target/release/h5prov export --perfetto out.json $TRACES"
