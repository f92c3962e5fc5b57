#pragma once
// A sweep streamed to disk as it goes, so that a kill loses at most the config in flight, and
// resumed from there (Settings::output_prefix, Settings::resume). Under the prefix:
//   manifest.json   written when the session opens: the kscope version, the session facts and
//                   settings that decide what is measured, the sweep's configs
//   samples.csv     the raw samples of every finished config (the columns of write_samples_csv),
//                   appended as each config finishes
//   progress.jsonl  one line per finished config, appended after its samples: how many samples it
//                   has, whether it converged, its thermal pauses, and the info collectors' values
//                   of its samples with their types (CSV text loses them)
// With Settings::fsync_interval_s 0, each config's lines are written and flushed to the disk
// (fdatasync), samples first, as the config finishes. Otherwise a config's lines reach the
// operating system (which keeps them when the process dies) at most kWriteWindow after it
// finished, together with those of the configs finished meanwhile, and the disk at most
// fsync_interval_s after they were written: a writer thread keeps both deadlines while the next
// config runs, however long it takes. A config counts as finished only
// once its progress line is complete and its samples are in samples.csv. Resuming keeps the
// finished configs and cuts what follows them (a line half-written when the process died included).
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/aggregator.hpp"
#include "core/files/output_claim.hpp"
#include "core/model/sample_text.hpp"
#include "kscope/results.hpp"

namespace kscope::detail {

// ConfigError unless the output prefix's directory exists and is writable, and the prefix names
// no device: checked before anything runs, so a bad path never costs a sweep. `writer` says who
// writes there, for the prefix's name in messages.
void check_output_prefix(const Settings& settings, ResultKind writer = ResultKind::sweep);

class SampleStream {
 public:
  // Starts the files, the manifest recording the `kind` of result (a sweep or an evaluation). With
  // Settings::resume, reads them instead: refuses (ConfigError naming every difference) when they
  // hold another session or sweep, and gives the finished configs' samples and outcomes to the
  // aggregator.
  SampleStream(const Settings& settings, const std::vector<Config>& configs, const SessionInfo& session,
               const std::vector<MetricSpec>& metrics, Aggregator& aggregator, ResultKind kind = ResultKind::sweep);

  // Read back from disk: not to be measured again.
  bool finished(std::size_t config_index) const { return finished_[config_index]; }

  // How long a finished config may wait to be written, unless fsync_interval_s is 0: a killed
  // process loses at most the configs finished in its last kWriteWindow, and the config in flight.
  // It saves the system calls of each config (about 10 us) where configs take microseconds.
  static constexpr std::chrono::milliseconds kWriteWindow{10};

  // Writes the configs still waiting, and flushes (the destructor does too, ignoring errors).
  ~SampleStream();
  SampleStream(const SampleStream&) = delete;
  SampleStream& operator=(const SampleStream&) = delete;

  // Appends the config's samples (the aggregator's, since the previous call) and its outcome, now or
  // at most kWriteWindow later. Throws the FileError of a write that failed since the last call.
  void config_finished(std::size_t config_index, const Aggregator& aggregator);
  // Writes the configs still waiting, and flushes the files to the disk: before the files are
  // written whole at the end of a sweep, or replaced after a failure.
  void sync();

 private:
  void start(const std::string& manifest);
  // Resuming, phase by phase: the stored manifest (nullopt: none, a fresh start), the same sweep
  // measured the same way, the finished configs given to the aggregator, the files cut after them.
  // Reads back what is under the prefix; `shard`: the configs this session measures.
  void resume(const std::string& manifest, const std::optional<Shard>& shard, Aggregator& aggregator);
  std::optional<nlohmann::ordered_json> read_manifest() const;
  void check_same_sweep(const nlohmann::ordered_json& stored, const nlohmann::ordered_json& now) const;
  struct ReadBack {
    std::vector<std::string> header;  // of samples.csv, as this session writes it
    bool has_header = false, has_progress = false;
    std::size_t samples_end = 0, progress_end = 0;  // just past the last finished config's records
    std::size_t configs = 0;                        // finished
  };
  ReadBack read_back(Aggregator& aggregator);
  void cut_after(const ReadBack& back);

  std::string prefix_;
  std::vector<std::string> info_columns_;  // the info collectors' names
  const std::vector<Config>& configs_;
  const SessionInfo& session_;
  std::vector<bool> finished_;
  std::size_t written_samples_ = 0;  // of the aggregator's samples

  using Clock = std::chrono::steady_clock;
  // With mutex_ held, as everything below.
  void write_pending(bool durably);
  void sync_files();
  void throw_if_failed() const;
  // The writer thread: writes the waiting configs and flushes the files when they are due.
  void write_when_due();
  void stop_writer() noexcept;

  SampleText rows_;
  std::string pending_samples_, pending_progress_;  // finished configs not yet written
  Clock::duration fsync_interval_;
  Clock::time_point first_pending_{};  // when the first config waiting to be written finished
  Clock::time_point last_write_ = Clock::now(), last_sync_ = Clock::now();
  bool unsynced_ = false;  // written, not flushed

  std::mutex mutex_;
  std::condition_variable due_;  // a config waits to be written, or the stream ends
  bool stopping_ = false;
  std::exception_ptr failed_;  // the writer thread's failure, thrown to the next caller
  std::thread writer_;         // unless fsync_interval_s is 0
};

}  // namespace kscope::detail
