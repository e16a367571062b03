#!/bin/sh
# PyTables' own light test suite, native and through h5prov at its default settings,
# interleaved (issue 31; docs/OVERHEAD.md, "A real application's suite"):
#
#   bench/pytables_suite.sh ROUNDS PYTHON PLUGIN_DIR [H5PROV]
#
# PYTHON has PyTables installed (e.g. the wheels of tests/python/requirements.txt), whose
# bundled HDF5 loads the libh5prov.so in PLUGIN_DIR. H5PROV (default: target/release/h5prov)
# reads the traces. Each round runs `python -m tables.tests.test_all` once natively and
# once traced, the order alternating between rounds, and prints per run: the wall, user and
# system seconds, the peak RSS, the tests run and the suite's verdict, and for a traced run
# the trace directory's bytes, its records and bytes per record (as `h5prov report` counts
# them), its processes and the report's trace warnings. A traced run whose trace
# directory holds no records fails the script: HDF5 fell back to the native connector.
#
# PyTables sizes a table's chunks by the L3 cache that py-cpuinfo reports. A VM often
# reports its host's whole L3 (this one 260 MiB), and then every Blosc2 table test
# allocates and touches chunks of that size: the suite takes over an hour instead of
# minutes (a 32 MiB L3 still costs ~10 s a test). So both kinds of run use a HOME whose
# `.pytables-cpuinfo.json` (PyTables' own cache of py-cpuinfo's answer) has no L3 size,
# and PyTables takes its own default chunk size, as on a machine whose L3 it cannot tell.
# Works in target/tmp/pytables-suite; the traces of the last traced run stay there.
set -eu
if [ $# -lt 3 ]; then
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
rounds=$1 py=$2 plug=$(cd "$3" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
h5prov=${4:-$repo/target/release/h5prov}
[ -f "$plug/libh5prov.so" ] || { echo "pytables_suite.sh: no libh5prov.so in $plug" >&2; exit 2; }
[ -x "$h5prov" ] || { echo "pytables_suite.sh: $h5prov is not an executable" >&2; exit 2; }
"$py" -c 'import tables' || { echo "pytables_suite.sh: $py cannot import tables" >&2; exit 2; }
work=$repo/target/tmp/pytables-suite
rm -rf "$work"
mkdir -p "$work/home"
"$py" - "$work/home/.pytables-cpuinfo.json" <<'EOF'
import json, sys
import cpuinfo
info = cpuinfo.get_cpu_info()
info.pop("l3_cache_size", None)
with open(sys.argv[1], "w") as f:
    json.dump(info, f)
EOF

run() { # run MODE ROUND
    mode=$1 i=$2 scratch=$work/scratch-$1-$2 log=$work/log-$1-$2.txt
    rm -rf "$scratch" "$work/traces"
    mkdir -p "$scratch"
    if [ "$mode" = h5prov ]; then
        mkdir -p "$work/traces"
        set -- env HDF5_PLUGIN_PATH="$plug" \
            HDF5_VOL_CONNECTOR="h5prov under_vol=0;under_info={};path=$work/traces"
    else
        set -- env
    fi
    (cd "$scratch" && HOME=$work/home TMPDIR=$scratch "$@" /usr/bin/time \
        -f "wall=%e user=%U sys=%S maxrss_kb=%M" -o "$work/time.txt" \
        "$py" -m tables.tests.test_all >"$log" 2>&1) || true
    tests=$(sed -n 's/^Ran \([0-9]*\) tests.*/\1/p' "$log")
    verdict=$(grep -E '^(OK|FAILED)' "$log" | tail -n 1 | tr ' ' '_')
    line="$mode round=$i $(tail -n 1 "$work/time.txt") tests=${tests:-?} verdict=${verdict:-none}"
    if [ "$mode" = h5prov ]; then
        bytes=$(du -sb "$work/traces" | cut -f1)
        "$h5prov" report "$work/traces" --json --no-progress >"$work/report.json"
        set -- $("$py" -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["run"]["records"], r["run"]["processes"], len(r.get("warnings", [])))' "$work/report.json")
        records=$1 processes=$2 warnings=$3
        [ "$records" -gt 0 ] || { echo "$line: no records, h5prov was not loaded" >&2; exit 1; }
        line="$line trace_bytes=$bytes records=$records bytes_per_record=$(echo "scale=1; $bytes / $records" | bc) processes=$processes report_warnings=$warnings"
    fi
    rm -rf "$scratch"
    echo "$line"
}

echo "# $(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
i=1
while [ "$i" -le "$rounds" ]; do
    if [ $((i % 2)) = 1 ]; then run native "$i"; run h5prov "$i"; else run h5prov "$i"; run native "$i"; fi
    i=$((i + 1))
done
echo "# $(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
