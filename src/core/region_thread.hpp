#pragma once
// Whether a region's work was launched only from the thread that opened it. A backend that times a
// region from the host's side (the events backend: two events on the legacy stream) measures the
// host's gap while another thread starts and launches as the kernel's time (+9% to +30% on an
// H100), so it refuses such a region by name rather than return a wrong number. Launch callbacks
// come from any thread; the region opens and closes on one.
#include <atomic>
#include <mutex>
#include <string>
#include <thread>

namespace kscope::detail {

class RegionThread {
 public:
  void open();  // on the region's thread
  // From any thread, for each launch, copy or fill (`call`: the driver function's name).
  void call_made(const char* call) noexcept;
  // On the region's thread, as it closes: empty where every call came from it, else the refusal's
  // text naming the first call from another thread.
  std::string close();

 private:
  std::atomic<bool> open_{false};
  std::thread::id owner_;  // written before open_ is set, read after
  std::atomic<bool> foreign_{false};
  std::mutex mutex_;
  std::string first_foreign_;
};

}  // namespace kscope::detail
