#!/usr/bin/env bash
# The rooms of kscope's sources (docs/architecture.md, "Rooms"): each includes only the rooms below
# it, so that a file's place says what it may depend on.
#   base (files, CSV and text primitives): the public headers and base only;
#   core (no io, and no CUDA: the library built and tested without a GPU), itself in rooms, from the
#   bottom: model (values, settings and their table, columns, names, messages, the log), statistics,
#   control (clocks, throttling, the thermal guard, energy), files (output formats and claims,
#   shards), engine (sessions, sweeps, aggregation, the durable stream, launch patterns, the entry),
#   decisions (compare, race, tune, evaluate and its checks); each includes only those before it;
#   io (the output formats' writers): base and core only;
#   device (the CUDA device): base and core's model only;
#   backends: no doctor (the doctor, above them, reaches them through the registry and their probes);
#   tools (the kscope program): the public headers (kscope/..., kscope/detail/... for front ends),
#   its own headers and libraries, never src/;
#   python/src (the bindings): the same.
# Usage: check_rooms.sh <source root>. Prints each include out of place; fails if there is one.
set -u
root=${1:?usage: check_rooms.sh <source root>}
cd "$root" || exit 2
status=0
# Prints what was found under its heading and fails the check, where something was.
report() {
  [ -n "$2" ] || return 0
  echo "$1:"
  echo "$2"
  status=1
}
# The includes of the files under $1 (C++ sources and headers) matching the regex $2, refused: $3.
refuse() {
  report "$1: $3" "$(grep -rnP --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cu' \
    "^[[:space:]]*#[[:space:]]*include[[:space:]]*$2" "$1")"
}
refuse src/base '"(core|io|backends|device|doctor)/' "base includes only the public headers and base"
refuse src/core '"(io|backends|device|doctor)/' "core includes no io (io depends on core, never the reverse), backends, device or doctor"
refuse src/core '<(cuda|cupti|nvml|nvperf|cublas|cufft|curand|nvtx|driver_types)' "core has no CUDA"
core_rooms=(model statistics control files engine decisions)
for ((i = 0; i < ${#core_rooms[@]}; i++)); do
  above=$(IFS='|'; echo "${core_rooms[*]:i+1}")
  [ -n "$above" ] || continue
  [ -d "src/core/${core_rooms[i]}" ] || { echo "src/core/${core_rooms[i]}: a room of core is missing"; status=1; continue; }
  refuse "src/core/${core_rooms[i]}" "\"core/($above)/" "core's ${core_rooms[i]} includes only the rooms of core before it"
done
report "src/core: every file is in one of core's rooms (${core_rooms[*]})" "$(find src/core -maxdepth 1 -type f)"
refuse src/io '"(backends|device|doctor)/' "io includes base and core only"
refuse src/device '"(io|backends|doctor|core/(?!model/))' "device includes base and core's model only"
refuse src/backends '"doctor/' "backends include no doctor (the doctor reaches them through the registry and their probes)"
refuse tools '"(core|io|base|backends|device|doctor)/' "tools include the public headers (kscope/...) only"
refuse python/src '"(core|io|base|backends|device|doctor)/' \
  "the bindings include the public headers (kscope/...) only"
# A private header never has a public one's name, so that an include's path alone says which it means.
for public in include/kscope/*.hpp include/kscope/detail/*.hpp; do
  namesake=$(find src -name "$(basename "$public")")
  if [ -n "$namesake" ]; then
    echo "$namesake: a private header named as the public $public: give it a name of its own"
    status=1
  fi
done
exit $status
