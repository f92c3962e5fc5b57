// Results as Google Benchmark's JSON (its json_reporter.cc, json_schema_version 1), for compare.py
// and the dashboards that read it. A benchmark is an annotation at one config; each recorded run
// is a repetition of one iteration whose real_time (and cpu_time: kscope measures no host time,
// and compare.py requires both) is the run's duration; the run's other metrics are user counters.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/file_access.hpp"
#include "core/model/log.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"
#include "kscope/results.hpp"
#include "kscope/statistics.hpp"

namespace kscope {
namespace {

using Json = nlohmann::ordered_json;

// Google Benchmark's time unit for a duration unit of kscope's backends; empty for anything else.
std::string time_unit(const std::string& unit) {
  static const std::map<std::string, std::string> units{
      {"ns", "ns"}, {"nsecond", "ns"}, {"us", "us"}, {"usecond", "us"}, {"\u00b5s", "us"}, {"\u03bcs", "us"},
      {"ms", "ms"}, {"msecond", "ms"}, {"s", "s"},   {"second", "s"},   {"seconds", "s"}};
  const auto found = units.find(unit);
  return found == units.end() ? std::string() : found->second;
}

// Fields of a benchmark entry, which a metric must not overwrite as a counter.
const std::set<std::string>& entry_fields() {
  static const std::set<std::string> fields{
      "name",          "family_index", "per_family_instance_index", "run_name",  "run_type",
      "repetitions",   "repetition_index", "threads",              "aggregate_name", "aggregate_unit",
      "iterations",    "real_time",    "cpu_time",                 "time_unit", "error_occurred",
      "error_message", "skipped",      "skip_message",             "label"};
  return fields;
}

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(); }  // strict JSON: null

// "annotation/n:1024/dtype:f32", as Google Benchmark names arguments with ArgNames.
std::string benchmark_name(const std::string& annotation, const Config& config) {
  std::string name = annotation;
  for (std::size_t i = 0; i < config.values().size(); ++i)
    name += "/" + config.names()[i] + ":" + config.values()[i].to_string();
  return name;
}

double cpu_mhz() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("cpu MHz", 0) == 0 && line.find(':') != std::string::npos)
      return std::strtod(line.c_str() + line.find(':') + 1, nullptr);
  }
  return 0;
}

std::string this_host() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

// Google Benchmark's context describes the run that measured: its date and load come from the
// session; the machine's CPU facts and the program only when the file is written on the measuring
// host (else 0 and empty: unknown), never those of wherever loaded results are written later.
Json context(const SessionInfo& s) {
  Json c;
  c["date"] = s.started_at;
  c["host_name"] = s.host;
  const bool here = !s.host.empty() && s.host == this_host();
  std::error_code error;
  c["executable"] = here ? std::filesystem::read_symlink("/proc/self/exe", error).string() : "";
  c["num_cpus"] = here ? std::thread::hardware_concurrency() : 0;
  c["mhz_per_cpu"] = here ? std::lround(cpu_mhz()) : 0;
  c["caches"] = Json::array();
  c["load_avg"] = Json::array();
  for (double load : s.load_avg) c["load_avg"].push_back(number(load));
  c["library_version"] = KSCOPE_VERSION;
#ifdef NDEBUG
  c["library_build_type"] = "release";
#else
  c["library_build_type"] = "debug";
#endif
  c["json_schema_version"] = 1;
  // Custom context (strings, as --benchmark_context gives): what measured, and how.
  c["kscope_version"] = KSCOPE_VERSION;
  c["gpu"] = s.gpu;
  c["gpu_uuid"] = s.gpu_uuid;
  c["driver_version"] = s.driver_version;
  c["backend"] = to_string(s.backend);
  c["cache_control"] = to_string(s.cache_control);
  c["clock_control"] = to_string(s.clock_control);
  return c;
}

struct Run {
  double duration;
  std::vector<std::pair<std::string, double>> counters;
};

struct Benchmark {
  std::string annotation;
  std::size_t config = 0;
  std::string duration_metric, unit;
  std::map<std::size_t, Run> runs;  // by recorded run
};

// The fields every entry starts with, in Google Benchmark's order.
Json entry(const std::string& name, const std::string& run_name, const char* run_type, std::size_t family,
           std::size_t instance, std::size_t repetitions) {
  Json e;
  e["name"] = name;
  e["family_index"] = family;
  e["per_family_instance_index"] = instance;
  e["run_name"] = run_name;
  e["run_type"] = run_type;
  e["repetitions"] = repetitions;
  return e;
}

// Each annotation's duration metric (its first metric in a unit of time) and Google Benchmark
// time unit, and the annotations in the order their samples came.
struct Durations {
  std::vector<std::string> annotations;
  std::map<std::string, std::pair<std::string, std::string>> of;  // annotation -> (metric, time unit)
};

// Throws ConfigError when no annotation has a duration metric; warns of each one left out for
// having none.
Durations duration_metrics(const Samples& samples) {
  Durations d;
  for (const SampleRow& s : samples) {
    if (std::find(d.annotations.begin(), d.annotations.end(), s.annotation) == d.annotations.end())
      d.annotations.push_back(s.annotation);
    if (!time_unit(s.unit).empty()) d.of.try_emplace(s.annotation, s.metric, time_unit(s.unit));
  }
  std::vector<std::string> timeless;
  for (const auto& a : d.annotations)
    if (!d.of.count(a)) timeless.push_back(a);
  if (!d.annotations.empty() && timeless.size() == d.annotations.size())
    throw ConfigError("these results hold no duration metric (no metric in ns, us, ms or s), and Google "
                      "Benchmark's JSON gives every benchmark a time; measure a duration too (e.g. " +
                      std::string(kGpuTimeDuration) + " with the counters or ncu backend)");
  for (const auto& a : timeless)
    detail::log_warning("write_gbench_json: annotation '" + a +
                        "' has no duration metric, and Google Benchmark's JSON needs one: it is left out");
  return d;
}

// Benchmarks in the order their samples came, runs by index; excluded (throttled, with
// ThrottledRuns::exclude) runs and annotations without a duration left out.
std::vector<Benchmark> benchmarks_of(const Samples& samples, const Durations& durations, bool exclude_throttled) {
  std::vector<Benchmark> benchmarks;
  std::map<std::pair<std::string, std::size_t>, std::size_t> index;
  for (const SampleRow& s : samples) {
    const auto duration = durations.of.find(s.annotation);
    if (duration == durations.of.end() || (exclude_throttled && s.throttled)) continue;
    if (s.metric != duration->second.first && entry_fields().count(s.metric))
      throw ConfigError("metric '" + s.metric + "' has the name of a field of Google Benchmark's JSON entries, "
                        "where kscope writes metrics as counters; rename it");
    auto [it, added] = index.try_emplace({s.annotation, s.config_index}, benchmarks.size());
    if (added) benchmarks.push_back({s.annotation, s.config_index, duration->second.first, duration->second.second, {}});
    Run& run = benchmarks[it->second].runs.try_emplace(s.run, Run{NAN, {}}).first->second;
    if (s.metric == duration->second.first) run.duration = s.value;
    else run.counters.emplace_back(s.metric, s.value);
  }
  return benchmarks;
}

// Where a benchmark's entries go: its name, family (annotation) and instance (config) indices.
struct Instance {
  std::string name;
  std::size_t family = 0, instance = 0;
};

// One entry per run: a repetition of one iteration.
void add_iterations(Json& entries, const Instance& at, const Benchmark& b, const std::vector<const Run*>& runs) {
  for (std::size_t r = 0; r < runs.size(); ++r) {
    Json e = entry(at.name, at.name, "iteration", at.family, at.instance, runs.size());
    e["repetition_index"] = r;
    e["threads"] = 1;
    e["iterations"] = 1;
    e["real_time"] = number(runs[r]->duration);
    e["cpu_time"] = number(runs[r]->duration);
    e["time_unit"] = b.unit;
    for (const auto& [metric, value] : runs[r]->counters) e[metric] = number(value);
    entries.push_back(std::move(e));
  }
}

// The aggregates Google Benchmark computes by default (mean, median, stddev, cv), of the time and
// of every counter.
void add_aggregates(Json& entries, const Instance& at, const Benchmark& b, const std::vector<const Run*>& runs) {
  std::vector<std::string> counter_names;
  for (const Run* run : runs)
    for (const auto& [metric, value] : run->counters)
      if (std::find(counter_names.begin(), counter_names.end(), metric) == counter_names.end())
        counter_names.push_back(metric);
  const auto series = [&](const std::string& metric) {
    std::vector<double> values;
    for (const Run* run : runs) {
      if (metric.empty()) values.push_back(run->duration);
      for (const auto& [m, v] : run->counters)
        if (m == metric) values.push_back(v);
    }
    return summarize(values, INFINITY);
  };
  const auto statistic = [](const SampleStatistics& s, const std::string& aggregate) {
    if (aggregate == "mean") return s.mean;
    if (aggregate == "median") return s.median;
    if (aggregate == "stddev") return s.count < 2 ? 0.0 : s.stddev;  // Google Benchmark: 0 for one value
    return s.count < 2 || s.mean == 0 ? 0.0 : s.stddev / s.mean;      // cv, as a fraction
  };
  const SampleStatistics time = series("");
  for (const std::string aggregate : {"mean", "median", "stddev", "cv"}) {
    Json e = entry(at.name + "_" + aggregate, at.name, "aggregate", at.family, at.instance, runs.size());
    e["threads"] = 1;
    e["aggregate_name"] = aggregate;
    e["aggregate_unit"] = aggregate == "cv" ? "percentage" : "time";
    e["iterations"] = runs.size();
    e["real_time"] = number(statistic(time, aggregate));
    e["cpu_time"] = number(statistic(time, aggregate));
    e["time_unit"] = b.unit;
    for (const auto& metric : counter_names) e[metric] = number(statistic(series(metric), aggregate));
    entries.push_back(std::move(e));
  }
}

}  // namespace

void Results::write_gbench_json(const std::string& path) const {
  const Durations durations = duration_metrics(samples_);
  const std::vector<Benchmark> benchmarks =
      benchmarks_of(samples_, durations, settings_.throttled_runs == ThrottledRuns::exclude);
  Json doc;
  doc["context"] = context(session_);
  doc["benchmarks"] = Json::array();
  std::map<std::string, std::size_t> instances;  // per annotation (family)
  for (const Benchmark& b : benchmarks) {
    const auto family = std::find(durations.annotations.begin(), durations.annotations.end(), b.annotation);
    const Instance at{benchmark_name(b.annotation, configs_[b.config]),
                      static_cast<std::size_t>(family - durations.annotations.begin()), instances[b.annotation]++};
    std::vector<const Run*> runs;
    for (const auto& [index_in_config, run] : b.runs)
      if (!std::isnan(run.duration)) runs.push_back(&run);  // a failed run (ignore_failures) did not run
    if (runs.empty()) continue;
    add_iterations(doc["benchmarks"], at, b, runs);
    if (runs.size() >= 2) add_aggregates(doc["benchmarks"], at, b, runs);  // as Google Benchmark: none of one repetition
  }
  detail::write_whole(path, doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

}  // namespace kscope
