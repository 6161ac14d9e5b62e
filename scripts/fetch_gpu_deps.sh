#!/usr/bin/env bash
# Unpack the small C libraries the build needs (cJSON, libmatheval; METIS for EDGEFLOW_MPI) from Debian
# packages into .deps/ (git-ignored), for machines without a package registry
# (the GPU machine).  Run here, then carry .deps to that machine; CMake looks in
# .deps/usr by default (EF_DEPS_PREFIX).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download libcjson-dev libcjson1 libmatheval-dev libmatheval1 libmetis-dev libmetis5)
mkdir -p "$root/.deps"
for f in "$tmp"/*.deb; do dpkg -x "$f" "$root/.deps/"; done
rm -rf "$tmp"
echo "unpacked into $root/.deps/usr"
