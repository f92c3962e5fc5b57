#pragma once
// What a profile returns: one summary row per (annotation, config, metric), the raw per-run
// samples behind them, and the session facts (device, backend, cache and clock state).
#include <cmath>
#include <compare>
#include <cstddef>
#include <iosfwd>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kscope/config.hpp"
#include "kscope/roofline.hpp"
#include "kscope/settings.hpp"
#include "kscope/summary_statistics.hpp"
#include "kscope/table.hpp"

namespace kscope {

// The facts of the session that measured: backend, device, host, clocks and thermal pauses. The
// tables' session columns come from it.
struct SessionInfo {
  Backend backend = Backend::cupti;  // what measured (the Backend column): never from_metrics or automatic
  std::size_t replay_passes = 1;  // body calls per run: >1 for counter metrics that need several passes
  CacheControl cache_control = CacheControl::all;  // as the session ran (the CacheControl column)
  ClockControl clock_control = ClockControl::none;  // as the session ran (the ClockControl column)
  std::string gpu;              // device name
  std::string gpu_uuid;  // NVIDIA's "GPU-..." identifier of the device
  std::string driver_version;   // the NVIDIA driver's, from NVML ("580.65.06"); empty when unknown
  std::string host;  // the host name
  double rated_sm_clock_mhz = 0;      // NaN when unknown
  double rated_memory_clock_mhz = 0;  // NaN when unknown
  // What the roofs come from (kscope/roofline.hpp); 0 when unknown.
  std::size_t sm_count = 0;
  std::size_t compute_capability = 0;     // major * 10 + minor: 90 for sm_90
  std::size_t memory_bus_width_bits = 0;  // the DRAM roof's bus width
  double locked_sm_clock_mhz = NAN;   // the clocks held by clock_control=base; NaN when not locked
  double locked_memory_clock_mhz = NAN;  // NaN: NVML has no base memory clock to lock to
  std::size_t thermal_pauses = 0;     // pauses of the thermal guard during the session
  double thermal_pause_s = 0;  // their total duration
  std::string report_path;            // Backend::ncu: the Nsight Compute report (.ncu-rep); empty otherwise
  // The metrics the backend measured, in its order; the rows' other metrics are derive_metric's.
  // Empty in results files written before kscope recorded it.
  std::vector<std::string> metrics;
  // With the energy metrics (NaN without): the GPU's idle power measured in the session, the
  // energy of one L2 flush (taken out of each run's), and how often its energy counter updates.
  double idle_power_w = NAN;
  double flush_energy_j = NAN;  // J per L2 flush
  double energy_update_s = NAN;  // the counter's update interval
  // When and under which load the session measured: local time with its UTC offset
  // ("2025-01-31T17:02:11+01:00"), and the host's 1, 5 and 15 minute load averages as it opened;
  // empty when unknown (results files of kscope 0.1.0 before these were saved).
  std::string started_at;
  std::vector<double> load_avg;  // the 1, 5 and 15 minute load averages

  // "default", "strict", "continuous" or "custom" (mode_name)
  std::string mode() const { return mode_name(cache_control, clock_control); }
};

// One recorded value: an annotation's metric in one run of one config (a row of the samples table).
struct SampleRow {
  std::string annotation;    // the region
  std::size_t config_index;  // into Results::configs()
  std::size_t run;              // 0-based recorded run (warm-ups are not kept)
  std::string metric;  // the Metric column
  std::string unit;    // the Unit column
  double value;                 // NaN for a failed (ignore_failures) run
  std::string kernel;           // demangled names, "|"-joined when kernels were combined
  double sm_clock_mhz;          // observed around the run (NVML); NaN when unavailable
  double memory_clock_mhz;      // the same for the memory clock
  bool throttled;               // see the throttle rule in docs/measurement-control.md
  std::vector<Cell> info = {};  // the info collectors' values for this run (InfoColumns::samples)
  bool other_process = false;   // another process ran kernels on the GPU during the run (NVML)
  // How long two or more of the region's kernels, copies and fills ran at the same time in the run
  // (ns); NaN where the backend does not time each of them.
  double overlap_ns = NAN;
  // How long the GPU waited for the host to enqueue the region's first work, within the value (ns):
  // backends that time the whole region from its start (events); NaN for the others.
  double host_gap_ns = NAN;
};

namespace detail {
class SampleStore;
}

// The raw samples of a Results, in the order they were recorded: a read-only sequence of SampleRow.
// They are stored by column (about 24 bytes a sample, whatever its strings), so each SampleRow is
// built when it is read: iterate, index, or take size() as with a vector.
class Samples {
 public:
  // A random-access iterator over the rows; reading one makes its SampleRow.
  class iterator {
   public:
    using iterator_concept = std::random_access_iterator_tag;  // what it supports
    using iterator_category = std::input_iterator_tag;  // its rows are values, not references
    using value_type = SampleRow;  // what reading it gives
    using difference_type = std::ptrdiff_t;  // a distance between two
    using reference = SampleRow;  // a row, made when read
    using pointer = void;  // none: the rows are made when read

    iterator() = default;
    SampleRow operator*() const;  // the row it is at
    SampleRow operator[](difference_type n) const { return *(*this + n); }  // the row n further
    iterator& operator++() { return *this += 1; }  // the next row
    iterator operator++(int) { iterator was = *this; ++*this; return was; }  // the next row, returning this one
    iterator& operator--() { return *this -= 1; }  // the row before
    iterator operator--(int) { iterator was = *this; --*this; return was; }  // the row before, returning this one
    iterator& operator+=(difference_type n) { index_ = static_cast<std::size_t>(static_cast<difference_type>(index_) + n); return *this; }  // n rows on
    iterator& operator-=(difference_type n) { return *this += -n; }  // n rows back
    friend iterator operator+(iterator it, difference_type n) { return it += n; }  // n rows on
    friend iterator operator+(difference_type n, iterator it) { return it += n; }  // n rows on
    friend iterator operator-(iterator it, difference_type n) { return it -= n; }  // n rows back
    // The rows from b to a.
    friend difference_type operator-(const iterator& a, const iterator& b) {
      return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.index_ == b.index_; }  // at the same row
    friend auto operator<=>(const iterator& a, const iterator& b) { return a.index_ <=> b.index_; }  // ordered by row

   private:
    friend class Samples;
    iterator(const detail::SampleStore* store, std::size_t index) : store_(store), index_(index) {}
    const detail::SampleStore* store_ = nullptr;
    std::size_t index_ = 0;
  };

  Samples() = default;
  Samples(const std::vector<SampleRow>& rows);  // implicit: Results are built from rows
  // kscope's own: the first `count` samples of a store.
  Samples(std::shared_ptr<const detail::SampleStore> store, std::size_t count);

  std::size_t size() const { return size_; }  // the number of samples
  bool empty() const { return size_ == 0; }  // no samples
  SampleRow operator[](std::size_t i) const;  // i < size()
  SampleRow at(std::size_t i) const;          // throws std::out_of_range past the end
  SampleRow front() const { return (*this)[0]; }          // the first sample
  SampleRow back() const { return (*this)[size_ - 1]; }   // the last sample
  iterator begin() const { return {store_.get(), 0}; }    // the first sample, to iterate
  iterator end() const { return {store_.get(), size_}; }  // past the last sample

  // samples[i].config_index, without making the row.
  std::size_t config_index(std::size_t i) const;

  // kscope's own: the columns behind the rows (its writers and statistics read them directly).
  const detail::SampleStore& store() const;

 private:
  std::shared_ptr<const detail::SampleStore> store_;
  std::size_t size_ = 0;
};

// One row of the summary table: an (annotation, config, metric) with its statistics over the runs.
struct SummaryRow {
  std::string annotation;    // the region
  std::size_t config_index;  // into Results::configs()
  std::string metric;        // the Metric column
  std::string unit;          // the Unit column
  SampleStatistics stats;    // over the runs that enter the statistics
  double avg_value;             // stats.mean, divided by the baseline when normalized
  std::string normalized;       // empty, or the baseline annotation
  double normalization_value;   // the baseline's mean; NaN when not normalized
  double geomean;               // of avg_value over the configs of (annotation, metric)
  std::string kernel;  // demangled name(s), "|"-joined when combined
  double observed_sm_clock_mhz;      // mean over the group's runs
  double observed_memory_clock_mhz;  // the same for the memory clock
  std::size_t throttled_runs;        // runs flagged as throttled (kept or excluded per Settings)
  std::optional<bool> converged;     // adaptive sampling: the target was met; empty for fixed runs
  std::size_t thermal_pauses;        // thermal-guard pauses during this config
  std::vector<Cell> info = {};       // the info collectors' cells (InfoColumns::summary)
  // Settings::work of the row's annotation at its config, on each of its rows (what a per-row
  // figure such as energy divides by); nullopt when none was declared.
  std::optional<Work> work = {};
  // The annotation's duration row with declared work: where it stands under the roofs; NaN otherwise.
  RooflinePoint roofline = {};
  std::size_t other_process_runs = 0;  // runs during which another process ran kernels on the GPU
  std::size_t overlapped_runs = 0;     // runs in which the region's kernels ran at the same time (overlap_ns > 0)
  std::size_t host_gap_runs = 0;       // runs whose value holds a wait of the GPU for the host (host_gap_ns > 0)
};

// The columns of Settings::info_collectors (kscope/info_collector.hpp), after the schema's in each
// table; every row's `info` holds their cells in this order.
struct InfoColumns {
  std::vector<std::string> summary;  // in the summary table
  std::vector<std::string> samples;  // in the samples table
};

// What profile() returns: the summary rows, the raw samples behind them, the configs and the
// session facts; tables, CSV, JSON and Google Benchmark JSON from them.
class Results {
 public:
  Results() = default;
  // Keeps the plain-data part of `settings`: its callables (derive_metric, combine_kernel_metrics,
  // the info collectors' functions) belong to the caller's code, which the results may outlive.
  // `shard_sessions`: for merged shards (kscope/merge.hpp), each shard's session, by shard index.
  Results(SessionInfo session, std::vector<Config> configs, std::vector<SummaryRow> rows,
          Samples samples, InfoColumns info_columns = {}, Settings settings = {},
          std::vector<SessionInfo> shard_sessions = {});

  const SessionInfo& session() const { return session_; }  // the session that measured
  const Settings& settings() const { return settings_; }  // as the session ran, callables dropped
  // Merged shards: the session of each shard, by index (empty for one process's results).
  const std::vector<SessionInfo>& shard_sessions() const { return shard_sessions_; }
  // The session that measured a config: its shard's for merged shards, else session(). The tables'
  // session columns (GPU, Host, ...) come from it.
  const SessionInfo& session_of(std::size_t config_index) const;
  const std::vector<Config>& configs() const { return configs_; }  // the sweep's, in its order
  const std::vector<std::string>& axis_names() const;               // the sweep's axes
  const std::vector<SummaryRow>& rows() const { return rows_; }     // the summary, in the table's order
  const Samples& samples() const { return samples_; }               // every recorded value
  const InfoColumns& info_columns() const { return info_columns_; }  // the info collectors' columns
  bool empty() const { return rows_.empty(); }                      // nothing was measured

  // The summary row for an annotation, metric and config index; throws Error if absent.
  const SummaryRow& at(const std::string& annotation, const std::string& metric,
                       std::size_t config_index) const;

  // Long-format tables: config axes as columns after Annotation; session facts on every row; the
  // info collectors' columns last.
  Table summary_table() const;
  Table samples_table() const;  // the same for the raw samples

  void write_csv(const std::string& path) const;          // summary
  void write_samples_csv(const std::string& path) const;  // raw samples
  // Everything above in kscope's results format, which load_results reads back (docs/compare.md, "Comparing
  // results", describes it).
  void write_json(const std::string& path) const;
  void write_json(std::ostream& out) const;  // the same, to a stream
  // Google Benchmark's JSON (as compare.py and benchmark dashboards read it): one benchmark per
  // annotation and config, one entry per run with its duration, the other metrics as counters.
  void write_gbench_json(const std::string& path) const;
  // Writes the file under `prefix` of each output format that has one (kscope/detail/result_files.hpp
  // names them: <prefix>summary.csv, samples.csv and results.json).
  void write_all(const std::string& prefix) const;

 private:
  SessionInfo session_;
  std::vector<Config> configs_;
  std::vector<SummaryRow> rows_;
  Samples samples_;
  InfoColumns info_columns_;
  Settings settings_;
  std::vector<SessionInfo> shard_sessions_;
};

std::ostream& operator<<(std::ostream& out, const Results& results);

// Reads a file written by Results::write_json. Throws Error when it cannot be read, ConfigError
// when it is not a kscope results file or its format version is not this kscope's.
Results load_results(const std::string& path);
// The same from a stream; `name` names it in errors.
Results load_results(std::istream& in, const std::string& name);

}  // namespace kscope
