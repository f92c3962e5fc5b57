// The simulated backend's PC sampling: synthetic samples from the code a test gives each kernel,
// spread over its instructions' stall reasons in proportion to their weights.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "kscope/errors.hpp"
#include "kscope/testing.hpp"

namespace kscope::testing {
namespace {

// `total` shared out in proportion to `weights`, exactly: floors, then the largest remainders
// (the first on ties).
std::vector<std::uint64_t> shares(std::uint64_t total, const std::vector<double>& weights) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::uint64_t> out(weights.size(), 0);
  if (sum <= 0 || total == 0) return out;
  std::vector<std::pair<double, std::size_t>> remainders;
  std::uint64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double exact = static_cast<double>(total) * std::max(weights[i], 0.0) / sum;
    out[i] = static_cast<std::uint64_t>(std::floor(exact));
    given += out[i];
    remainders.emplace_back(exact - std::floor(exact), i);
  }
  std::stable_sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; given < total && k < remainders.size(); ++k, ++given) ++out[remainders[k].second];
  return out;
}

// A kernel without code: one instruction without line information, as cuBLAS's would be.
const std::vector<SimulatedInstruction>& library_code() {
  static const std::vector<SimulatedInstruction> code{{0, "", {}, {{"selected", 1.0}}, "", 0, 0}};
  return code;
}

}  // namespace

void SimulatedPcSampler::sample_pcs(const LineSampling& sampling) {
  std::lock_guard lock(backend_.mutex_);
  if (!backend_.sampling_denied_.empty()) throw BackendError(backend_.sampling_denied_);
  backend_.sampling_ = sampling;
  backend_.sampled_ = {};
  backend_.sampled_.sass_metrics = sampling.sass_metrics && backend_.sass_metrics_supported_;
  if (sampling.sass_metrics && !backend_.sass_metrics_supported_)
    backend_.sampled_.notes.push_back("this GPU does not count executed instructions (SASS metrics): the "
                                      "InstExecuted and ThreadEfficiencyPct columns are empty");
}

SampledCode SimulatedPcSampler::take_samples() {
  std::lock_guard lock(backend_.mutex_);
  backend_.sampling_.reset();
  SampledCode out = std::exchange(backend_.sampled_, {});
  for (const auto& in : out.instructions)
    if (!in.source.empty())
      if (const auto text = backend_.source_texts_.find(in.source.back().file); text != backend_.source_texts_.end())
        out.sources.emplace(text->first, text->second);
  return out;
}

void SimulatedBackend::set_code(const std::string& kernel_name, std::vector<SimulatedInstruction> code) {
  std::lock_guard lock(mutex_);
  code_[kernel_name] = std::move(code);
}

void SimulatedBackend::set_source_text(const std::string& file, std::string text) {
  std::lock_guard lock(mutex_);
  source_texts_[file] = std::move(text);
}

void SimulatedBackend::sample_launch(const std::string& kernel_name, double duration_ns) {
  if (!sampling_ || !region_sampled_) return;
  const unsigned period = sampling_->period_log2;
  const double cycles = std::max(duration_ns, 0.0) * simulated_device_.rated_sm_clock_mhz * 1e-3;
  const auto samples = static_cast<std::uint64_t>(
      std::llround(cycles * static_cast<double>(simulated_device_.sm_count) / std::ldexp(1.0, static_cast<int>(period))));
  const auto found = code_.find(kernel_name);
  const std::vector<SimulatedInstruction>& code = found != code_.end() ? found->second : library_code();

  auto kernel = std::find_if(sampled_.kernels.begin(), sampled_.kernels.end(), [&](const SampledKernel& k) {
    return std::tie(k.annotation, k.config_index, k.kernel) == std::tie(region_name_, region_config_, kernel_name);
  });
  if (kernel == sampled_.kernels.end())
    kernel = sampled_.kernels.insert(kernel, SampledKernel{region_name_, region_config_, kernel_name, 0, 0, 0, period, ""});
  ++kernel->launches;
  kernel->dropped += dropped_per_launch_;

  std::vector<double> weights;
  for (const auto& in : code)
    for (const auto& [reason, w] : in.stalls) weights.push_back(w);
  const std::vector<std::uint64_t> given = shares(samples, weights);
  std::size_t w = 0;
  for (const auto& in : code) {
    std::uint64_t got = 0;
    for (std::size_t r = 0; r < in.stalls.size(); ++r) got += given[w + r];
    if (got == 0 && !sampled_.sass_metrics) {
      w += in.stalls.size();
      continue;
    }
    const std::string function = in.function.empty() ? kernel_name : in.function;
    auto sampled = std::find_if(sampled_.instructions.begin(), sampled_.instructions.end(), [&](const SampledInstruction& s) {
      return std::tie(s.annotation, s.config_index, s.kernel, s.function, s.pc_offset) ==
             std::tie(region_name_, region_config_, kernel_name, function, in.pc_offset);
    });
    if (sampled == sampled_.instructions.end()) {
      SampledInstruction s;
      s.annotation = region_name_;
      s.config_index = region_config_;
      s.kernel = kernel_name;
      s.function = function;
      s.pc_offset = in.pc_offset;
      s.sass = in.sass;
      s.source = in.source;
      sampled = sampled_.instructions.insert(sampled_.instructions.end(), std::move(s));
    }
    for (const auto& [reason, weight] : in.stalls) {
      const std::uint64_t n = given[w++];
      if (n == 0) continue;
      auto stall = std::find_if(sampled->stalls.begin(), sampled->stalls.end(), [&](const auto& s) { return s.first == reason; });
      if (stall == sampled->stalls.end()) sampled->stalls.emplace_back(reason, n);
      else stall->second += n;
      kernel->samples += n;
    }
    if (sampled_.sass_metrics) {
      sampled->executed = sampled->executed.value_or(0) + in.executed;
      sampled->thread_executed = sampled->thread_executed.value_or(0) + in.thread_executed;
    }
  }
}

}  // namespace kscope::testing
