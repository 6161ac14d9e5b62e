#!/usr/bin/env bash
# diagnostic: stack samples of rank 0 during the device AMG across ranks' loop (L2, 2 ranks, 2 GPUs)
set -u
G=$(cd "$(dirname "$0")" && pwd); W=/tmp/w20
export LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu:$G/metis/usr/lib/x86_64-linux-gnu"
for t in gdb eu-stack pstack perf py-spy; do command -v $t; done
mpirun --allow-run-as-root -n 2 -x OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 --bind-to none $W/wrap.sh /tmp/b_src/bin/edgeflow run $W/c.json --steps 12 --overwrite > $W/run2.log 2>&1 &
sleep 9
PID=$(pgrep -f "b_src/bin/edgeflow run" | head -1); echo pid=$PID
for i in $(seq 1 12); do
  if command -v gdb >/dev/null; then gdb -p $PID -batch -ex "bt 14" 2>/dev/null | grep "^#" | sed 's/ (.*//' | head -14; echo ---; fi
  sleep 0.4
done
wait; tail -3 $W/run2.log
