// profile_lines(): a sweep measured by a backend that samples program counters, its samples folded
// into the LineResults' tables; what the samples cannot tell (too few, dropped) said per kernel.
#include <functional>

#include <algorithm>

#include "base/file_access.hpp"
#include "core/model/attribution.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/log.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"
#include "kscope/lines.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope {
namespace {

std::string period_option() { return detail::spell("LineSampling::period_log2", "sampling_period"); }

void check_sampling(const LineSampling& sampling) {
  if (sampling.period_log2 != 0 && (sampling.period_log2 < 5 || sampling.period_log2 > 31))
    throw ConfigError(period_option() + " must be from 5 to 31 (a sample every 2^5 = 32 to 2^31 cycles), or " +
                      detail::spell("0", "None") + " for kscope's default (" +
                      std::to_string(kDefaultSamplingPeriodLog2) + "), not " + std::to_string(sampling.period_log2));
}

// What a sweep of line samples cannot keep: the table is made of the samples of the whole session.
void check_settings(const Settings& s) {
  const std::string why = ": line sampling returns its samples when the sweep ends";
  if (!s.output_prefix.empty())
    throw ConfigError(detail::option("output_prefix") + " does not work with line sampling" + why + "; save them with " +
                      detail::spell("LineResults::write_json", "results.save(path)"));
  if (s.resume) throw ConfigError(detail::option("resume") + " does not work with line sampling" + why);
  if (s.shard && s.shard->count > 1)
    throw ConfigError(detail::option("shard") + " does not work with line sampling" + why +
                      "; sample each process's configs with a call of its own");
  if (!s.metrics.empty())
    throw ConfigError(detail::option("metrics") + " does not work with line sampling: it measures the samples of "
                      "each line; measure metrics in a profile of their own");
}

// Too few samples, or samples lost: said on the kernel's row and as a warning.
void note_sampling_limits(SampledCode& code, const LineSampling& sampling) {
  for (SampledKernel& k : code.kernels) {
    std::string note;
    if (k.samples < sampling.min_kernel_samples) {
      const unsigned finer = k.period_log2 > 7 ? k.period_log2 - 3 : 5;
      note = "only " + std::to_string(k.samples) + " samples over " + std::to_string(k.launches) +
             " launches at a sample every 2^" + std::to_string(k.period_log2) +
             " cycles: too coarse for this kernel's shares; sample more often (" + period_option() +
             detail::spell(" = ", "=") + std::to_string(finer) + ") or raise " + detail::option("runs");
    }
    if (k.dropped > 0) {
      note += std::string(note.empty() ? "" : "; ") + std::to_string(k.dropped) +
              " samples were dropped by the hardware while its annotation ran (its buffer was full): the shares are "
              "of the samples kept; sample less often (a larger " + period_option() + ")";
    }
    if (note.empty()) continue;
    k.note += (k.note.empty() ? "" : "; ") + note;
    detail::log_warning("kernel " + k.kernel + " in annotation '" + k.annotation + "': " + note,
                        detail::WarningKind::run);
  }
}

// The kernels Settings::ignore_kernel_list leaves out of the sweep's table leave the line tables too.
void drop_ignored(SampledCode& code, const std::vector<std::string>& ignored) {
  const auto is_ignored = [&](const std::string& kernel) {
    return std::any_of(ignored.begin(), ignored.end(), [&](const std::string& p) { return detail::kernel_matches(kernel, p); });
  };
  std::erase_if(code.instructions, [&](const SampledInstruction& in) { return is_ignored(in.kernel); });
  std::erase_if(code.kernels, [&](const SampledKernel& k) { return is_ignored(k.kernel); });
}

// The text of each file the line rows name, read as it is now (the sampler gives those it holds
// itself); a file that cannot be read leaves its rows without text.
void read_sources(SampledCode& code) {
  constexpr std::uint64_t kLargestSource = 8 << 20;
  std::vector<std::string> unread;
  for (const SampledInstruction& in : code.instructions) {
    if (in.source.empty()) continue;
    const std::string& file = in.source.back().file;
    if (code.sources.contains(file)) continue;
    try {
      detail::InputFile source(file, "a source file");
      code.sources[file] = detail::read_whole(source, file, kLargestSource, "a source file");
    } catch (const Error&) {
      code.sources[file] = "";
      unread.push_back(file);
    }
  }
  if (!unread.empty()) {
    std::string listed;
    for (const auto& f : unread) listed += (listed.empty() ? "" : ", ") + f;
    code.notes.push_back("source files not found here, their LineText is empty: " + listed);
  }
}

}  // namespace

LineResults profile_lines_with_backend(const Sweep& sweep, const Settings& settings, const Body& body,
                                       MeasurementBackend& backend, const LineSampling& requested) {
  check_sampling(requested);
  check_settings(settings);
  PcSampler* sampler = backend.pc_sampler();
  if (sampler == nullptr)
    throw BackendError("backend " + to_string(backend.describe().backend) +
                       " cannot sample program counters: line sampling needs the pcsampling backend (" +
                       detail::spell("profile_lines", "kscope.analyze.lines") + " chooses it)");
  LineSampling sampling = requested;
  if (sampling.period_log2 == 0) sampling.period_log2 = kDefaultSamplingPeriodLog2;
  Settings s = settings;
  // A region's kernels each get their lines; the sweep's table adds their samples up.
  if (!s.combine_kernel_metrics) s.combine_kernel_metrics = std::plus<double>();
  sampler->sample_pcs(sampling);
  Results sweep_results;
  try {
    sweep_results = profile_with_backend(sweep, s, body, backend);
  } catch (...) {
    sampler->take_samples();  // a failed sweep's samples are of configs the error's results may not hold
    throw;
  }
  SampledCode code = sampler->take_samples();
  detail::LogScope log(settings.verbosity);
  drop_ignored(code, settings.ignore_kernel_list);
  note_sampling_limits(code, sampling);
  read_sources(code);
  return LineResults(std::move(sweep_results), std::move(code));
}

LineResults profile_lines(const Sweep& sweep, const Settings& settings, const Body& body,
                          const LineSampling& sampling) {
  const Backend pcsampling = Backend::named("pcsampling");
  if (settings.backend != Backend::from_metrics && settings.backend != pcsampling)
    throw ConfigError(detail::option("backend") + " is " + to_string(settings.backend) +
                      ", but line sampling measures with the pcsampling backend: leave " + detail::option("backend") +
                      " unset");
  check_sampling(sampling);
  check_settings(settings);
  Settings s = settings;
  s.backend = pcsampling;
  const BackendDefinition& d = definition(pcsampling);
  if (!d.make) throw InternalError("the pcsampling backend has no factory (kscope bug: please report it)");
  const auto backend = d.make(s);
  return profile_lines_with_backend(sweep, s, body, *backend, sampling);
}

}  // namespace kscope
