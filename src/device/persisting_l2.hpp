#pragma once
// A persisting-L2 carve-out that a measured call set (the context's cudaLimitPersistingL2CacheSize,
// or an access-policy window on its stream): lines kept in the L2 across the cold-cache flush, a
// way to read more than the DRAM can deliver (karpathy/llm.c PR #851). evaluate() reports it and
// kscope resets it (kscope::CallObserver::take_persisting_l2).
#include <cuda_runtime_api.h>

#include <string>

namespace kscope::device {

// What was set on the current device and on `stream`, in words, then reset: the limit to 0, the
// window to none, every persisting line to normal. Empty when nothing was set (and on GPUs without
// a persisting L2).
std::string take_persisting_l2(cudaStream_t stream);

}  // namespace kscope::device
