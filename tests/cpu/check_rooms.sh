#!/usr/bin/env bash
# The rooms of kscope's sources (docs/architecture.md, "Rooms"): each includes only the rooms below
# it, so that a file's place says what it may depend on.
#   base (files, CSV and text primitives): the public headers and base only;
#   core (the engine): no io, and no CUDA: it is the library built and tested without a GPU;
#   backends: no doctor (the doctor, above them, reaches them through the registry and their probes);
#   tools (the kscope program): the public headers (kscope/..., kscope/detail/... for front ends),
#   its own headers and libraries, never src/;
#   python/src (the bindings): the same.
# Usage: check_rooms.sh <source root>. Prints each include out of place; fails if there is one.
set -u
root=${1:?usage: check_rooms.sh <source root>}
cd "$root" || exit 2
status=0
# Lists the includes of the files under $1 (C++ sources and headers) matching the regex $2.
refuse() {
  local room=$1 pattern=$2 why=$3 found
  found=$(grep -rnP --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cu' "^[[:space:]]*#[[:space:]]*include[[:space:]]*$pattern" "$room")
  if [ -n "$found" ]; then
    echo "$room: $why:"
    echo "$found"
    status=1
  fi
}
refuse src/base '"(core|io|backends|device|doctor)/' "base includes only the public headers and base"
refuse src/core '"(io|backends|device|doctor)/' "core includes no io (io depends on core, never the reverse), backends, device or doctor"
refuse src/core '<(cuda|cupti|nvml|nvperf|cublas|cufft|curand|nvtx|driver_types)' "core has no CUDA"
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
