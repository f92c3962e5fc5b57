#pragma once
// A persisting-L2 carve-out that a measured call set (the context's cudaLimitPersistingL2CacheSize,
// or an access-policy window on its stream): lines kept in the L2 across the cold-cache flush, a
// way to read more than the DRAM can deliver (karpathy/llm.c PR #851). evaluate() reports it and
// kscope resets it (kscope::CallObserver::take_persisting_l2).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace kscope::device {

// The current device's persisting-L2 set-aside in bytes (0 on GPUs without a persisting L2). Some
// drivers give a context a set-aside of their own: what a measured call finds before it is no
// change of the call's.
std::size_t persisting_l2_limit();

// What was set on the current device and on `stream`, in words, then reset: the limit back to
// `limit_before` (persisting_l2_limit() before the measured calls), the window to none, every
// persisting line to normal. Empty when nothing was set (and on GPUs without a persisting L2).
std::string take_persisting_l2(cudaStream_t stream, std::size_t limit_before);

}  // namespace kscope::device
