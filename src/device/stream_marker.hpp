#pragma once
// kscope's stream marker: an empty kernel that the cupti backend enqueues on a caller's stream once a
// measured call has returned (kscope::CallObserver::call_returned). It starts when the stream has
// run everything enqueued before it, so its CUPTI record's start is the moment the caller's stream
// reached the end of the call; work of the call still running then was not joined to that stream.
#include <cuda_runtime_api.h>

namespace kscope::device {

// Throws CudaError when the launch fails (a destroyed stream, a dead context).
void launch_stream_marker(cudaStream_t stream);

}  // namespace kscope::device
