#!/bin/sh
# Issue times of asynchronous calls with and without h5prov over vol-async, interleaved
# (docs/ASYNC.md, "Measured issue times"):
#
#   bench/async_issue.sh PROCESSES ROUNDS [STACK=PLUGIN_DIR...]
#
# Each STACK=PLUGIN_DIR names a directory holding a libh5prov.so (e.g. main's build and
# this branch's) to run h5prov over vol-async with, and under it as STACK-under (the
# application's calls then reach only vol-async; h5prov runs on its background thread);
# vol-async alone ("async") always runs
# as the reference, and so does HDF5's own pass-through connector over vol-async
# ("passthru": src/H5VLpassthru.c of the HDF5 sources, built as a plugin, the floor any
# pass-through pays; its request wait, notify and cancel free the request, which HDF5's
# event set frees again, so the build drops those three frees). PROCESSES times, every
# stack runs tests/c/async_issue.c once, in turn, with ROUNDS rounds each: round 1 is cold
# (the process's first file), the others warm.
# Prints the median issue time, in µs, of "create" (H5Fcreate_async + H5Dcreate_async),
# "write" (H5Dwrite_async of 512 KiB), "open" (H5Fopen_async + H5Dopen_async) and "close"
# (H5Dclose_async + H5Fclose_async after the write) per stack, cold and warm apart.
#
# Needs the thread-safe HDF5 and the vol-async build with the mended clock
# (`hdf5-test-harness build-hdf5 --variant threadsafe`, `... build-async`); set H5PROV_CACHE
# if the cache is not ~/.cache/h5prov. Works in a scratch directory under target/tmp.
set -eu
if [ $# -lt 2 ]; then
    sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
n=$1 rounds=$2
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${H5PROV_CACHE:-$HOME/.cache/h5prov}
ts=$cache/hdf5-1.14.5-threadsafe/install
va=$cache/vol-async-1.8.1-threadsafe-exec-time/plugin
for d in "$ts/lib" "$va"; do
    [ -d "$d" ] || { echo "async_issue.sh: $d is missing (build-hdf5 --variant threadsafe, build-async)" >&2; exit 2; }
done
work=$repo/target/tmp/async-issue-bench
rm -rf "$work"
mkdir -p "$work"
cc -std=c99 -O2 -o "$work/ai" "$repo/tests/c/async_issue.c" -I"$ts/include" -L"$ts/lib" \
    -Wl,-rpath,"$ts/lib" -lhdf5
# HDF5's pass-through as an external plugin: its own name and a testing value (HDF5 has the
# built-in one registered as "pass_through", 1; hdf5.h includes the installed
# H5VLpassthru.h, so the class takes them as literals), and the loader's two entry points.
pt=$work/plugin-passthru
mkdir -p "$pt"
sed -e 's/(H5VL_class_value_t)H5VL_PASSTHRU_VALUE,/(H5VL_class_value_t)317,/' \
    -e 's/^\( *\)H5VL_PASSTHRU_NAME, /\1"pass_through_ext",/' \
    -e '/^H5VL_pass_through_request_\(wait\|notify\|cancel\)(/,/^}/s/H5VL_pass_through_free_obj(o);/;/' \
    "$cache/hdf5-1.14.5-threadsafe/src/src/H5VLpassthru.c" >"$pt/H5VLpassthru.c"
cat >>"$pt/H5VLpassthru.c" <<'EOC'
#include "H5PLextern.h"
H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_VOL; }
const void *H5PLget_plugin_info(void) { return &H5VL_pass_through_g; }
EOC
cc -std=c99 -O2 -shared -fPIC -o "$pt/libh5pt.so" "$pt/H5VLpassthru.c" -I"$ts/include" \
    -L"$ts/lib" -Wl,-rpath,"$ts/lib" -lhdf5
rm "$pt/H5VLpassthru.c"
stacks="async passthru"
for s in "$@"; do
    name=${s%%=*} dir=${s#*=}
    stacks="$stacks $name $name-under"
    [ -f "$dir/libh5prov.so" ] || { echo "async_issue.sh: no libh5prov.so in $dir" >&2; exit 2; }
    # HDF5 dlopens every lib*.so of the plugin path: a directory with only this one.
    mkdir -p "$work/plugin-$name"
    cp "$dir/libh5prov.so" "$work/plugin-$name/"
done
out=$work/issue.txt
: >"$out"
i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    for name in $stacks; do
        rm -rf "$work/d" "$work/tr"
        mkdir "$work/d"
        if [ "$name" = async ]; then
            plugins=$va conn="async under_vol=0;under_info={}"
        elif [ "$name" = passthru ]; then
            plugins=$pt:$va conn="pass_through_ext under_vol=512;under_info={under_vol=0;under_info={}}"
        elif [ "$name" != "${name%-under}" ]; then
            plugins=$work/plugin-${name%-under}:$va
            conn="async under_vol=416;under_info={under_vol=0;under_info={};path=$work/tr}"
        else
            plugins=$work/plugin-$name:$va
            conn="h5prov under_vol=512;under_info={under_vol=0;under_info={}};path=$work/tr"
        fi
        HDF5_PLUGIN_PATH=$plugins HDF5_VOL_CONNECTOR=$conn "$work/ai" "$work/d" "$rounds" |
            sed "s/^/stack=$name /" >>"$out"
        if [ "$name" != async ] && [ "$name" != passthru ] && ! ls "$work/tr"/*.meta.json >/dev/null 2>&1; then
            echo "async_issue.sh: h5prov was not loaded for $name" >&2
            exit 1
        fi
    done
done
# Medians per stack, cold (round 1) and warm (rounds 2..).
printf '%-12s %-5s %10s %10s %10s %10s\n' stack round create_us write_us open_us close_us
for name in $stacks; do
    for phase in cold warm; do
        row=$name
        for col in create_us write_us open_us close_us; do
            m=$(awk -v st="stack=$name" -v ph="$phase" -v col="$col" '
                $1 == st {
                    cold = ($2 == "round=1")
                    if ((ph == "cold") != cold) next
                    for (k = 3; k <= NF; k++) { split($k, kv, "="); if (kv[1] == col) print kv[2] }
                }' "$out" | sort -g | awk '{ v[NR] = $1 } END {
                    if (NR == 0) { print "-"; exit }
                    if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
            row="$row $m"
        done
        echo "$row" | awk -v ph="$phase" '{ printf "%-12s %-5s %10s %10s %10s %10s\n", $1, ph, $2, $3, $4, $5 }'
    done
done
echo "(medians of $n processes per stack; raw lines in $out)"
