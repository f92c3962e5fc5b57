#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "core/engine/call_order.hpp"
#include "core/model/caller_language.hpp"
#include "core/engine/first_work.hpp"
#include "core/engine/stream_join.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"
#include "kscope/testing.hpp"

namespace kscope::testing {

// The simulated GPU's timeline: where each stream's work ends, the events recorded on them, the
// last L2 flush, and the engine's StreamJoin acting on them as on CUDA streams.
class SimulatedBackend::Streams final : public detail::StreamOps {
 public:
  // Each thread's own default stream (kPerThreadStream) has a key of its own, above every stream a
  // test can name.
  std::uintptr_t key_of(std::uintptr_t stream) {
    if (stream != kPerThreadStream) return stream;
    const auto [it, added] = per_thread_.try_emplace(std::this_thread::get_id(), kFirstPerThreadKey + per_thread_.size());
    kinds_[it->second] = StreamKind::blocking;
    return it->second;
  }
  void make(std::uintptr_t stream, StreamKind kind) { kinds_[stream] = kind; }

  // The host issues a call on the stream of `key` `gap_ns` after the GPU could start it (the stream
  // ready, the calls before it issued): the host's clock moves there.
  void issue(std::uintptr_t key, double gap_ns) {
    host_ns_ = std::max(ready_ns(key), issued_ns_) + static_cast<std::uint64_t>(std::llround(std::max(gap_ns, 0.0)));
  }
  // A kernel enqueued (issued) now on the stream of `key`: it starts once the stream is ready, and
  // takes `duration_ns` plus the time it overlaps the L2 flush.
  GpuInterval run(std::uintptr_t key, double duration_ns) {
    const std::uint64_t start = std::max(ready_ns(key), host_ns_);
    const auto length = static_cast<std::uint64_t>(std::llround(std::max(duration_ns, 0.0)));
    const std::uint64_t overlap = overlap_ns({start, start + length}, flush_);
    issued_ns_ = start;
    return {start, end_ns_[key] = start + length + overlap};
  }
  // A kernel still running when the flush starts runs beside it too: it ends later by the overlap,
  // which is returned.
  std::uint64_t slow_by_flush(std::uintptr_t key, GpuInterval& ran) {
    const std::uint64_t overlap = overlap_ns(ran, flush_);
    ran.end_ns += overlap;
    std::uint64_t& end = end_ns_[key];
    end = std::max(end, ran.end_ns);
    return overlap;
  }
  // The L2 flush on the default stream: after what the legacy stream waits for (the streams kscope
  // joined to it among them); the first call of each other stream waits for its end.
  void flush(std::uint64_t ns) {
    join.join();
    const std::uint64_t start = std::max(ready_ns(0), issued_ns_);
    flush_ = {start, start + ns};
    issued_ns_ = host_ns_ = start;
    end_ns_[0] = flush_.end_ns;
    join.gate_after_legacy();
  }
  // An event recorded on `from` and waited for by `into`.
  void join_streams(std::uintptr_t from, std::uintptr_t into) {
    std::uint64_t& end = end_ns_[into];
    end = std::max(end, ready_ns(from));
    const Event event = make_event();
    order.recorded(event, from);
    order.waited(into, event);
  }
  // The host waits for the stream's work so far: its next launch comes after it ends.
  void host_wait(std::uintptr_t key) {
    issued_ns_ = std::max(issued_ns_, ready_ns(key));
    host_ns_ = std::max(host_ns_, issued_ns_);
    order.host_waited(key);
  }
  void host_work(std::uint64_t ns) {
    issued_ns_ += ns;
    host_ns_ = std::max(host_ns_ + ns, issued_ns_);
  }
  // Where the stream of `key` has reached once the host has issued everything so far.
  std::uint64_t reached_ns(std::uintptr_t key) { return std::max(ready_ns(key), issued_ns_); }
  void drain() {
    for (const auto& [stream, end] : end_ns_) issued_ns_ = std::max(issued_ns_, end);  // the GPU is idle now
  }

  bool follows_legacy(Stream stream) override { return kind(stream) == StreamKind::blocking; }
  bool capturing(Stream) override { return false; }
  Event make_event() override { return next_event_++; }
  void destroy_event(Event) noexcept override {}  // the join's few events live as long as the streams
  // An event completes once its stream's work so far has, and not before the host recorded it.
  void record(Event event, Stream stream) override { event_ns_[event] = std::max(ready_ns(stream), host_ns_); }
  void wait(Stream stream, Event event) override {
    std::uint64_t& end = end_ns_[stream];
    end = std::max(end, event_ns_[event]);
  }
  // The GPU reached the event before the host's clock: the host came late.
  bool completed(Event event) override { return event_ns_[event] < host_ns_; }
  std::uint64_t event_ns(Event event) { return event_ns_[event]; }
  void forget(Event event) { event_ns_.erase(event); }  // a region's events, once read

  detail::StreamJoin join{*this};
  detail::CallOrder order{*this};  // fed by the simulated program's launches, joins and waits
  detail::FirstWork first{*this};

 private:
  static constexpr std::uintptr_t kFirstPerThreadKey = std::uintptr_t(1) << 62;

  static std::uint64_t overlap_ns(const GpuInterval& a, const GpuInterval& b) {
    const std::uint64_t start = std::max(a.start_ns, b.start_ns), end = std::min(a.end_ns, b.end_ns);
    return end > start ? end - start : 0;
  }
  StreamKind kind(std::uintptr_t stream) const {
    const auto it = kinds_.find(stream);
    return it == kinds_.end() ? StreamKind::non_blocking : it->second;
  }
  // Where the work so far on a stream ends, with the work it waits for implicitly: the legacy stream
  // waits for every blocking stream, a blocking stream for the legacy stream.
  std::uint64_t ready_ns(std::uintptr_t key) {
    std::uint64_t ready = end_ns_[key];
    if (key == 0) {
      for (const auto& [stream, end] : end_ns_)
        if (stream != 0 && kind(stream) == StreamKind::blocking) ready = std::max(ready, end);
    } else if (kind(key) == StreamKind::blocking) {
      ready = std::max(ready, end_ns_[0]);
    }
    return ready;
  }

  std::map<std::uintptr_t, std::uint64_t> end_ns_;  // where each stream's last call ends
  std::map<std::uintptr_t, StreamKind> kinds_;
  std::map<std::thread::id, std::uintptr_t> per_thread_;
  std::map<Event, std::uint64_t> event_ns_;  // when each recorded event completes
  std::uint64_t issued_ns_ = 0;  // the latest start so far: the host has issued everything before it
  std::uint64_t host_ns_ = 0;    // where the host's clock stands on the GPU's: the last call's issue
  GpuInterval flush_{};
  Event next_event_ = 1;
};

SimulatedBackend::SimulatedBackend() : streams_(std::make_unique<Streams>()) {}

SimulatedBackend::~SimulatedBackend() = default;

void SimulatedBackend::make_stream(std::uintptr_t stream, StreamKind kind) {
  if (stream == 0 || stream == kPerThreadStream)
    throw ConfigError("SimulatedBackend::make_stream: stream " + std::to_string(stream) + " is " +
                      (stream == 0 ? "the default stream" : "each thread's default stream") +
                      ", which follows the default stream's rules; make another number a stream");
  std::lock_guard lock(mutex_);
  streams_->make(stream, kind);
}

void SimulatedBackend::launch(const std::string& kernel_name, double duration_ns, double gap_ns,
                              std::uintptr_t stream) {
  constexpr double kLongest = 1e18;  // the simulated GPU clock counts nanoseconds in 64 bits
  const std::string where = detail::spell("SimulatedBackend::launch: ", "SimulatedBackend.launch: ");
  for (const auto& [name, ns, what] : {std::tuple{"duration_ns", duration_ns, "a kernel"},
                                       std::tuple{"gap_ns", gap_ns, "a gap"}}) {
    if (!(std::abs(ns) <= kLongest))
      throw ConfigError(where + name + " is " + detail::number_text(ns) + ", beyond what the simulated GPU clock "
                        "counts: give a finite number of nanoseconds of at most 1e18 (31 years)");
    if (ns < 0)
      throw ConfigError(where + name + " is " + detail::number_text(ns) + ": " + what + " takes 0 ns or more; give "
                        "a number of nanoseconds from 0 to 1e18");
  }
  std::lock_guard lock(mutex_);
  if (current_run_ >= batch_.size()) return;  // outside profiling: nothing measures it
  if (noise_) duration_ns = noise_->launch(kernel_name, duration_ns, gap_ns);
  sample_launch(kernel_name, duration_ns);
  const std::uintptr_t key = streams_->key_of(stream);
  // As from CUPTI's launch callback: the default streams follow the legacy one by definition.
  if (key != 0 && stream != kPerThreadStream) streams_->join.before_call(key);
  streams_->issue(key, gap_ns);
  streams_->first.before_call(key, detail::spell("SimulatedBackend::launch", "SimulatedBackend.launch").c_str());
  const GpuInterval ran = streams_->run(key, duration_ns);
  const std::uint64_t id = ++launches_;
  streams_->order.enqueued(key, id);
  const double slowed_ns = static_cast<double>(ran.end_ns - ran.start_ns) - std::llround(std::max(duration_ns, 0.0));
  batch_[current_run_].launches.push_back(
      Launch{current_region_, kernel_name, duration_ns + slowed_ns, ran, observing_ && returned_, key, id});
  SimulatedEnergy& energy = device_.energy();
  energy.run(std::max(gap_ns, 0.0) * 1e-9, energy.power().idle_w);
  energy.run(std::max(duration_ns, 0.0) * 1e-9, energy.power().kernel_w);
}

void SimulatedBackend::set_noise(const SimulatedNoise& noise) {
  std::lock_guard lock(mutex_);
  noise_.emplace(noise, simulated_device_.rated_sm_clock_mhz);
  device_.set_clock_source([this] {
    std::lock_guard clock_lock(mutex_);
    return ClockReading{noise_->sm_clock_mhz(), simulated_device_.rated_memory_clock_mhz, std::nullopt};
  });
}

void SimulatedBackend::join(std::uintptr_t from, std::uintptr_t into) {
  std::lock_guard lock(mutex_);
  streams_->join_streams(streams_->key_of(from), streams_->key_of(into));
}

void SimulatedBackend::host_wait(std::uintptr_t stream) {
  std::lock_guard lock(mutex_);
  streams_->host_wait(streams_->key_of(stream));
}

void SimulatedBackend::host_work(double ns) {
  if (!(ns >= 0 && ns <= 1e18))
    throw ConfigError(detail::spell("SimulatedBackend::host_work: ", "SimulatedBackend.host_work: ") + "ns is " +
                      detail::number_text(ns) + ": give a number of nanoseconds from 0 to 1e18");
  std::lock_guard lock(mutex_);
  streams_->host_work(static_cast<std::uint64_t>(std::llround(ns)));
}

void SimulatedBackend::set_persisting_l2(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  persisting_l2_bytes_ = bytes;
}

void SimulatedBackend::flush_cache() {
  std::lock_guard lock(mutex_);
  ++flushes_;
  if (persisting_l2_bytes_ > 0) ++persisting_resets_;
  persisting_l2_bytes_ = 0;  // the cold cache the flush promises holds no persisting lines either
  device_.energy().run(device_.energy().power().flush_s, device_.energy().power().flush_w);
  streams_->flush(static_cast<std::uint64_t>(std::llround(device_.energy().power().flush_s * 1e9)));
  for (BatchRun& run : batch_)
    for (Launch& l : run.launches) l.duration_ns += static_cast<double>(streams_->slow_by_flush(l.stream, l.gpu_time));
}

void SimulatedBackend::synchronize() {
  if (during_synchronize_) during_synchronize_();
  std::lock_guard lock(mutex_);
  streams_->drain();
}

std::vector<MetricSpec> SimulatedBackend::metrics() const {
  if (region_timing_)
    return {{"test__region_duration", "ns",
             "simulated: from the region's start on the default stream to the end of its work, as the events backend "
             "times it (not a measurement)"}};
  return {{"test__kernel_duration", "ns", "simulated duration given to the simulated backend's launch (not a measurement)"}};
}

SessionInfo SimulatedBackend::describe() const {
  SessionInfo info;
  info.backend = Backend::simulated;
  info.gpu = simulated_device_.name;
  info.gpu_uuid = "GPU-00000000-0000-0000-0000-000000000000";
  info.host = "simulated";
  info.rated_sm_clock_mhz = simulated_device_.rated_sm_clock_mhz;
  info.rated_memory_clock_mhz = simulated_device_.rated_memory_clock_mhz;
  info.sm_count = simulated_device_.sm_count;
  info.compute_capability = simulated_device_.compute_capability;
  info.memory_bus_width_bits = simulated_device_.memory_bus_width_bits;
  info.replay_passes = passes_;
  return info;
}

void SimulatedBackend::begin_session(const Settings&) {
  if (open_) throw BackendError("SimulatedBackend: begin_session while a session is open");
  open_ = true;
  ++sessions_;
  std::lock_guard lock(mutex_);
  streams_->order.reset();
  timing_regions_ = region_timing_;
}

void SimulatedBackend::end_session() noexcept { open_ = false; }

void SimulatedBackend::begin_batch(std::size_t runs) {
  batch_.assign(runs, {});
  pass_ = 1;
}

void SimulatedBackend::begin_run(const RunContext& run) {
  std::lock_guard lock(mutex_);
  current_run_ = run.batch_index;
  if (noise_ && run.pass == 1) noise_->run_started();
  batch_.at(current_run_).returned_at_ns.clear();
  current_region_ = -1;
  batch_.at(current_run_).launches.clear();  // a later pass replaces the earlier one's launches
}

void SimulatedBackend::region_begin(const RegionContext& region) {
  std::lock_guard lock(mutex_);
  current_region_ = static_cast<std::ptrdiff_t>(region.index);
  returned_ = false;
  streams_->order.begin_call();
  region_name_ = region.name;
  region_config_ = region.run.config;
  region_sampled_ = region.run.recorded && region.run.pass == 1;
  if (!timing_regions_) return;
  // As the events backend: the start event on the default stream, after the work joined to it.
  Streams& s = *streams_;
  s.join.join();
  RegionTiming& timing = batch_.at(current_run_).timings[current_region_];
  timing = {s.make_event(), s.make_event(), s.make_event()};
  s.record(timing.start, 0);
  s.join.gate(timing.start);
  s.first.arm(timing.start, timing.probe);
}

void SimulatedBackend::region_end(const RegionContext&) {
  std::lock_guard lock(mutex_);
  if (timing_regions_) {
    Streams& s = *streams_;
    RegionTiming& timing = batch_.at(current_run_).timings[current_region_];
    if (const auto seen = s.first.disarm()) {
      timing.seen = true;
      timing.gpu_waited = seen->gpu_waited;
      timing.first_work = seen->call;
    }
    s.join.join();
    s.record(timing.stop, 0);
    s.join.ungate();
  }
  current_region_ = -1;
  returned_ = false;
  region_sampled_ = false;
  if (!region_end_failure_.empty()) throw BackendError(std::exchange(region_end_failure_, ""));
}

void SimulatedBackend::end_run(const RunContext& run, const std::vector<RegionRecord>& regions) {
  BatchRun& b = batch_.at(run.batch_index);
  b.regions = regions.size();
  b.ended = true;
}

bool SimulatedBackend::batch_has_room() const {
  std::size_t used = 0, largest = 0;
  for (const BatchRun& b : batch_) {
    used += b.launches.size();
    largest = std::max(largest, b.launches.size());
  }
  return used + largest <= batch_launches_;
}

bool SimulatedBackend::another_pass_needed() {
  if (pass_ >= passes_) return false;
  ++pass_;
  return true;
}

std::vector<RunMeasurement> SimulatedBackend::collect_batch() {
  std::lock_guard lock(mutex_);
  std::vector<RunMeasurement> runs;
  for (const BatchRun& b : batch_) {
    if (!b.ended) continue;
    RunMeasurement out(b.regions);
    if (timing_regions_) {
      for (const auto& [region, t] : b.timings) {
        if (region < 0 || static_cast<std::size_t>(region) >= b.regions) continue;
        const std::uint64_t start = streams_->event_ns(t.start);
        KernelMeasurement k{"", {static_cast<double>(streams_->event_ns(t.stop) - start)}};
        if (t.seen) {
          k.host_gap_ns = t.gpu_waited ? static_cast<double>(streams_->event_ns(t.probe) - start) : 0.0;
          k.first_work = t.first_work;
        }
        for (std::uintptr_t e : {t.start, t.probe, t.stop}) streams_->forget(e);
        out[static_cast<std::size_t>(region)].push_back(std::move(k));
      }
      runs.push_back(std::move(out));
      continue;
    }
    for (const auto& l : b.launches) {
      if (l.region < 0) continue;
      KernelMeasurement k{l.name, {l.duration_ns}, l.gpu_time};
      const auto returned = b.returned_at_ns.find(l.region);
      k.launched_after_return = l.after_return;
      k.unjoined = observing_ && ((returned != b.returned_at_ns.end() && l.gpu_time.end_ns > returned->second) ||
                                  l.unjoined);
      out[static_cast<std::size_t>(l.region)].push_back(std::move(k));
    }
    runs.push_back(std::move(out));
  }
  batch_sizes_.push_back(runs.size());
  batch_.clear();
  current_run_ = 0;
  return runs;
}

void SimulatedBackend::abandon_run(const RunContext& run) noexcept {
  std::lock_guard lock(mutex_);
  current_region_ = -1;
  streams_->first.disarm();
  if (run.pass > 1) {
    batch_.clear();  // the earlier passes of the batch's runs are useless without this one
    return;
  }
  batch_[run.batch_index] = {};
}

void SimulatedCalls::observe_calls() {
  std::lock_guard lock(backend_.mutex_);
  backend_.observing_ = true;
}

void SimulatedCalls::call_returned(const RegionContext& region, std::uintptr_t stream) {
  std::lock_guard lock(backend_.mutex_);
  if (backend_.current_run_ >= backend_.batch_.size()) return;
  backend_.returned_ = true;
  // The caller's stream reaches the call's end once its own work before it has run.
  const std::uintptr_t caller = backend_.streams_->key_of(stream);
  const std::uint64_t reached = backend_.streams_->reached_ns(caller);
  auto& run = backend_.batch_[backend_.current_run_];
  run.returned_at_ns[static_cast<std::ptrdiff_t>(region.index)] = reached;
  const std::vector<detail::CallOrder::Id> unjoined = backend_.streams_->order.unjoined(caller);
  for (auto& l : run.launches)
    if (std::find(unjoined.begin(), unjoined.end(), l.id) != unjoined.end()) l.unjoined = true;
}

std::string SimulatedCalls::take_persisting_l2(std::uintptr_t) {
  std::lock_guard lock(backend_.mutex_);
  const std::size_t bytes = std::exchange(backend_.persisting_l2_bytes_, 0);
  if (bytes == 0) return "";
  ++backend_.persisting_resets_;
  return "a persisting-L2 carve-out of " + std::to_string(bytes) + " bytes was set";
}

void SimulatedEnergy::set_power(SimulatedPower power) {
  power_ = power;
  offset_mj_ = power.start_mj - counter_at(energy_j_) + offset_mj_;
  shown_mj_ = counter_at(energy_j_);
}

std::uint64_t SimulatedEnergy::counter_at(double energy_j) const {
  return offset_mj_ + static_cast<std::uint64_t>(std::floor(energy_j * 1000.0));  // wraps at 2^64
}

void SimulatedEnergy::run(double seconds, double watts) {
  const double start_s = now_s_, start_j = energy_j_, end_s = start_s + seconds, every = power_.update_s;
  // The last update the interval passes shows the energy used up to its moment (found directly, so
  // that a long interval costs no more than a short one).
  if (const double first = (std::floor(start_s / every) + 1) * every; first <= end_s) {
    double last = first + std::floor((end_s - first) / every) * every;
    if (last > end_s) last -= every;  // rounding
    shown_mj_ = counter_at(start_j + watts * (last - start_s));
  }
  now_s_ = start_s + seconds;
  energy_j_ = start_j + watts * seconds;
}

void SimulatedEnergy::restart_at(std::uint64_t millijoules) {
  offset_mj_ = millijoules - static_cast<std::uint64_t>(std::floor(energy_j_ * 1000.0));
}

EnergyReading SimulatedEnergy::read() {
  if (!missing_.empty()) throw BackendError(missing_);
  ++reads_;
  run(power_.read_s / 2, power_.idle_w);
  const EnergyReading reading{shown_mj_, now_s_};
  run(power_.read_s / 2, power_.idle_w);
  return reading;
}

ClockReading FakeDevice::clocks() {
  if (clocks_.empty()) return clock_source_ ? clock_source_() : ClockReading{};
  return clocks_[clock_cursor_++ % clocks_.size()];
}

std::optional<double> FakeDevice::thermal_margin_c() {
  if (margins_.empty()) return std::nullopt;
  const double m = margins_[std::min(margin_cursor_, margins_.size() - 1)];
  ++margin_cursor_;
  return m;
}

std::vector<unsigned> FakeDevice::other_processes() {
  if (others_.empty()) return {};
  return others_[std::min(others_cursor_++, others_.size() - 1)];
}

ClockReading FakeDevice::lock_base_clocks() {
  if (!deny_.empty()) throw BackendError(deny_);
  locked_ = true;
  return kBaseClocks;
}

void FakeDevice::restore_clocks() noexcept {
  if (!locked_) return;
  locked_ = false;
  ++restores_;
}

}  // namespace kscope::testing
