#include "core/engine/sample_stream.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "base/csv.hpp"
#include "base/file_access.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/cell_json.hpp"
#include "core/model/column_cells.hpp"
#include "core/model/log.hpp"
#include "core/files/output_claim.hpp"
#include "core/files/output_formats.hpp"
#include "core/model/settings_table.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"
#include "kscope/info_collector.hpp"

namespace kscope::detail {
namespace {

using Json = nlohmann::ordered_json;

std::string directory_of(const std::string& path) {
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  return directory.empty() ? "." : directory.string();
}

// A file descriptor that names its file in every error.
class File {
 public:
  File(std::string path, int flags) : path_(std::move(path)), fd_(::open(path_.c_str(), flags | O_CLOEXEC, 0644)) {
    if (fd_ < 0) fail("open");
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  void write(const std::string& text) {
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write");
      done += static_cast<std::size_t>(n);
    }
  }
  void truncate(std::size_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) fail("shorten");
  }
  // Returns once the data is on the disk: a later kill, or a power loss, keeps it.
  void sync() {
    if (::fdatasync(fd_) != 0) fail("flush to disk");
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    const int error = errno;
    throw FileError(std::string("cannot ") + what + " '" + path_ + "': " + std::strerror(error), path_,
                    std::error_code(error, std::generic_category()));
  }
  std::string path_;
  int fd_;
};

// `durably`: on the disk when it returns.
void append(const std::string& path, const std::string& text, bool durably) {
  File file(path, O_WRONLY | O_APPEND | O_CREAT);
  file.write(text);
  if (durably) file.sync();
}

void cut_durably(const std::string& path, std::size_t size) {
  File file(path, O_WRONLY);
  file.truncate(size);
  file.sync();
}

// What a refusal to read a sweep's file asks for instead.
std::string sweep_file_fix() {
  return "the file kscope wrote there, or start the sweep over with " + option("overwrite") +
         spell(" = true", "=True") + " instead of " + option("resume");
}

// A config value read back from its cell (in the manifest, or in samples.csv); nullopt for none.
std::optional<Value> value_of(const Cell& cell) {
  return std::visit(
      [](const auto& v) -> std::optional<Value> {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) return std::nullopt;
        else return Value(v);
      },
      cell);
}

std::optional<Value> value_from(const Json& j) {
  const auto cell = cell_from_json(j);
  return cell ? value_of(*cell) : std::nullopt;
}

// Longer than any line of progress.jsonl kscope writes (the info collectors' cells of one config).
constexpr std::size_t kMaxProgressLine = std::size_t(256) << 20;

// The manifest's layout; a manifest of another version was checked differently.
constexpr int kManifestVersion = 2;

// What a resumed sweep must share: the Settings fields of how it is measured
// (core/model/settings_table.cpp), with the backend and metrics as the session resolved them, the GPU,
// and the shard it measures.
Json identity(const Settings& s, const SessionInfo& session, const std::vector<MetricSpec>& metrics) {
  Json j = settings_json(s, {SettingsRole::measurement});
  j["gpu"] = session.gpu + " (" + session.gpu_uuid + ")";
  j["backend"] = to_string(session.backend);
  std::vector<std::string> names;
  for (const auto& m : metrics) names.push_back(m.name);
  j["metrics"] = names;
  if (s.shard && s.shard->count > 1) j["shard"] = s.shard->to_string();
  return j;
}

std::string label(const std::string& key) {
  if (key == "gpu") return "the GPU";
  if (key == "backend") return "the backend";
  return option(cut(key));
}

std::string shown(const Json& j) {
  if (j.is_boolean()) return j.get<bool>() ? "set" : "not set";
  if (j.is_null()) return "nothing";
  return cut(j.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string config_text(const std::vector<std::string>& axes, const std::vector<Value>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + (i < axes.size() ? axes[i] : "?") + "=" + values[i].to_string();
  return "(" + out + ")";
}

// "runs: 10 on disk, 20 now" for every fact that differs, then the sweep's first difference.
std::vector<std::string> differences(const Json& stored, const Json& now, const std::vector<Config>& configs) {
  std::vector<std::string> out;
  const Json& was = stored.value("identity", Json::object());
  const Json& is = now["identity"];
  for (const auto& [key, value] : is.items())
    if (!was.contains(key) || was[key] != value)
      out.push_back(label(key) + ": " + (was.contains(key) ? shown(was[key]) : "nothing") + " on disk, " + shown(value) +
                    " now");
  for (const auto& [key, value] : was.items())
    if (!is.contains(key)) out.push_back(label(key) + ": " + shown(value) + " on disk, nothing now");

  const auto axes = stored.value("axes", std::vector<std::string>{});
  const Json stored_configs = stored.value("configs", Json::array());
  const std::vector<std::string> axes_now = now["axes"];
  if (axes != axes_now || stored_configs.size() != configs.size()) {
    out.push_back("the sweep: " + std::to_string(stored_configs.size()) + " configs over " + python_list(axes) +
                  " on disk, " + std::to_string(configs.size()) + " over " + python_list(axes_now) + " now");
    return out;
  }
  for (std::size_t c = 0; c < configs.size(); ++c) {
    std::vector<Value> values;
    for (const auto& j : stored_configs[c])
      if (auto v = value_from(j)) values.push_back(*v);
    if (values != configs[c].values()) {
      out.push_back("config " + std::to_string(c + 1) + " of the sweep: " + config_text(axes, values) + " on disk, (" +
                    configs[c].to_string() + ") now");
      break;
    }
  }
  return out;
}

// Whether a samples.csv field is the config value write_csv wrote (a NaN real: an empty field).
bool holds(const std::string& field, const Value& value) {
  const ColumnType type = value.type() == ValueType::integer ? ColumnType::integer
                          : value.type() == ValueType::real  ? ColumnType::real
                          : value.type() == ValueType::boolean ? ColumnType::boolean
                                                              : ColumnType::text;
  const auto cell = parse_cell(field, type);
  if (cell && std::holds_alternative<std::monostate>(*cell)) return type == ColumnType::real && std::isnan(value.as_double());
  return cell && value_of(*cell) == value;
}

struct ProgressLine {
  std::size_t config;
  std::size_t samples;
  std::optional<bool> converged;
  std::size_t thermal_pauses;
  Json info;  // per sample, the info collectors' cells
};

// A non-negative integer member of a progress line; nullopt when missing or another value.
std::optional<std::size_t> count_in(const Json& line, const char* key) {
  const auto found = line.find(key);
  if (found == line.end() || !found->is_number_unsigned()) return std::nullopt;
  return found->get<std::size_t>();
}

// A progress line as config_finished writes it; nullopt for anything else.
std::optional<ProgressLine> parse_progress(const std::string& text, std::size_t configs) {
  Json j;
  try {
    j = parse_ordered_json(text);
  } catch (const JsonTextError&) {
    return std::nullopt;
  }
  if (!j.is_object()) return std::nullopt;
  const auto config = count_in(j, "config"), samples = count_in(j, "samples"), pauses = count_in(j, "thermal_pauses");
  const auto converged = j.find("converged");
  if (!config || *config >= configs || !samples || !pauses || converged == j.end() ||
      !(converged->is_null() || converged->is_boolean()))
    return std::nullopt;
  ProgressLine p{*config, *samples, std::nullopt, *pauses, j.value("info", Json())};
  if (converged->is_boolean()) p.converged = converged->get<bool>();
  return p;
}

// The next line of `in` without its line break, in `line`. False at the end, where a last line
// without its line break (cut off while being written) is not returned, and for a line longer than
// `limit` (no progress line kscope writes is), of which `line` holds the start.
bool next_line(std::istream& in, std::string& line, std::size_t limit) {
  line.clear();
  std::streambuf& buffer = *in.rdbuf();
  for (int c; (c = buffer.sbumpc()) != std::char_traits<char>::eof();) {
    if (c == '\n') return true;
    if (line.size() == limit) return false;
    line += static_cast<char>(c);
  }
  return false;
}

// Reads the next `line.samples` records, the samples of a finished config, and gives them to the
// aggregator; false (and none of them given) when they are not what this session writes for it.
bool read_samples(CsvRecordReader& records, CsvRecord& record, const ProgressLine& line, const Config& config,
                  std::size_t info_columns, Aggregator& aggregator) {
  const auto& columns = sample_column_definitions();
  const std::size_t axes = config.values().size();
  if (info_columns && !(line.info.is_array() && line.info.size() == line.samples)) return false;
  const std::size_t kept = aggregator.samples().size();
  const auto read = [&] {
    SampleRow row{};
    row.config_index = config.index();
    for (std::size_t r = 0; r < line.samples; ++r) {
      if (!records.next(record)) return false;
      const auto& fields = record.fields;
      if (fields.size() != 1 + axes + columns.size() + info_columns || !std::all_of(fields.begin(), fields.end(), is_utf8))
        return false;
      row.annotation = fields[0];
      for (std::size_t a = 0; a < axes; ++a) {
        if (!holds(fields[1 + a], config.values()[a])) return false;
      }
      for (std::size_t c = 0; c < columns.size(); ++c) {
        if (!columns[c].read) continue;
        const auto cell = parse_cell(fields[1 + axes + c], columns[c].spec.type);
        if (!cell || !columns[c].read(row, *cell)) return false;
      }
      row.info.clear();
      if (info_columns) {
        const Json& cells = line.info[r];
        if (!cells.is_array() || cells.size() != info_columns) return false;
        for (const auto& j : cells) {
          const auto cell = cell_from_json(j);
          if (!cell) return false;
          row.info.push_back(*cell);
        }
      }
      aggregator.add_sample(row);
    }
    return true;
  };
  if (read()) return true;
  aggregator.keep_samples(kept);
  return false;
}

// A prefix refused for its directory may hold a finished result, which needs no writing.
std::string finished_result_hint(const Settings& settings) {
  const std::string results = settings.output_prefix + kResultsFile;
  if (kind_of_file(results) != "a regular file") return "";
  const bool evaluation = [&] {
    try {
      const PrefixContents held = prefix_contents(settings.output_prefix);
      return held.state == PrefixContents::State::finished && held.kind == ResultKind::evaluation;
    } catch (const FileError&) {  // a link among its files: said when it is written to
      return false;
    }
  }();
  return ". The results of the " + std::string(evaluation ? "evaluation" : "sweep") +
         " there need no writing: read them with " +
         (evaluation ? spell("kscope::load_evaluation(\"" + results + "\")", "kscope.load_evaluation('" + results + "')")
                     : spell("kscope::load_results(\"" + results + "\")", "kscope.load('" + results + "')"));
}

}  // namespace

void check_output_prefix(const Settings& settings, ResultKind writer) {
  const std::string& prefix = settings.output_prefix;
  if (prefix.empty()) return;
  const std::string named = prefix_option(writer) + " '" + prefix + "'";
  if (const std::string kind = kind_of_file(prefix); !kind.empty() && kind != "a regular file" && kind != "a directory")
    throw ConfigError(named + " is " + kind + ": an output prefix starts the names of the files written beside it ('" +
                      prefix + kResultsFile + "', ...) or names a directory to write them in; give one of those");
  const std::string directory = directory_of(prefix);
  if (const std::string kind = kind_of_file(directory); kind != "a directory")
    throw ConfigError(named + ": its directory '" + directory + "' " +
                      (kind.empty() ? "does not exist; create it, or give a prefix in an existing directory"
                                    : "is " + kind + ", not a directory; give a prefix in a directory"));
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    const int error = errno;  // before the hint's own file system calls
    throw ConfigError(named + ": its directory '" + directory + "' is not writable (" + std::strerror(error) +
                      "); give a prefix in a writable directory" + finished_result_hint(settings));
  }
}

SampleStream::SampleStream(const Settings& settings, const std::vector<Config>& configs, const SessionInfo& session,
                           const std::vector<MetricSpec>& metrics, Aggregator& aggregator, ResultKind kind)
    : prefix_(settings.output_prefix),
      configs_(configs),
      session_(session),
      finished_(configs.size(), false),
      rows_(samples_csv_text(configs, settings.info_collectors.size())),
      // Finite (checked), and at most a year: within the clock's range.
      fsync_interval_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(std::min(settings.fsync_interval_s, 3.2e7)))) {
  for (const auto& c : settings.info_collectors) info_columns_.push_back(c.name);
  Json manifest;
  manifest["kscope_version"] = KSCOPE_VERSION;
  manifest["manifest_version"] = kManifestVersion;
  manifest["kind"] = to_string(kind);
  manifest["identity"] = identity(settings, session, metrics);
  manifest["host"] = session.host;
  manifest["axes"] = configs.empty() ? std::vector<std::string>{} : configs.front().names();
  Json values = Json::array();
  for (const auto& c : configs) {
    Json row = Json::array();
    for (const auto& v : c.values()) row.push_back(cell_json(to_cell(v)));
    values.push_back(std::move(row));
  }
  manifest["configs"] = std::move(values);
  if (settings.resume)
    resume(manifest.dump(1) + "\n", settings.shard, aggregator);
  else
    start(manifest.dump(1) + "\n");
  if (fsync_interval_ == Clock::duration::zero()) return;
  // Signals go to the sweep's thread, as without the writer: it is started with all of them blocked.
  sigset_t all, before;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  try {
    writer_ = std::thread([this] { write_when_due(); });
  } catch (...) {
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    throw;
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

// Only an empty prefix, or one whose earlier sweep the caller asked to replace (OutputClaim
// refused the others).
void SampleStream::start(const std::string& manifest) {
  if (const PrefixContents held = prefix_contents(prefix_); held.state != PrefixContents::State::empty)
    log_info("replacing " + held.description + " under '" + prefix_ + "' (" + option("overwrite") + ")");
  for (const char* file : {kProgressFile, kSamplesFile, kManifestFile}) write_target(prefix_ + file);  // no device
  std::ostringstream header;
  write_csv(Table{samples_header(configs_, info_columns_), {}}, header);
  // Progress first: files of an older sweep never pass for this one's. Its results go: until this
  // sweep writes its own, they would pass for them.
  write_whole(prefix_ + kProgressFile, "");
  for (const std::string& finished : result_files())
    if (finished != kSamplesFile && ::unlink((prefix_ + finished).c_str()) != 0 && errno != ENOENT)
      throw Error("cannot remove '" + prefix_ + finished + "' of the sweep being replaced: " + std::strerror(errno));
  write_whole(prefix_ + kSamplesFile, header.str());
  write_whole(prefix_ + kManifestFile, manifest);
}

void SampleStream::resume(const std::string& manifest, const std::optional<Shard>& shard, Aggregator& aggregator) {
  const auto stored = read_manifest();
  if (!stored) {
    log_info("nothing to resume under '" + prefix_ + "' (no " + kManifestFile + "): measuring every config");
    start(manifest);
    return;
  }
  check_same_sweep(*stored, Json::parse(manifest));
  const ReadBack back = read_back(aggregator);
  cut_after(back);
  written_samples_ = aggregator.samples().size();
  const auto own = static_cast<std::size_t>(std::count_if(
      configs_.begin(), configs_.end(), [&](const Config& c) { return !shard || shard->measures(c.index()); }));
  const std::string of = shard ? "the " + std::to_string(own) + " configs of shard " + shard->to_string()
                               : std::to_string(own) + " configs";
  log_info("resuming the sweep under '" + prefix_ + "': " + std::to_string(back.configs) + " of " + of +
           " were measured before; measuring the other " + std::to_string(own - back.configs));
}

std::optional<nlohmann::ordered_json> SampleStream::read_manifest() const {
  const std::string path = prefix_ + kManifestFile;
  auto file = InputFile::if_exists(path, sweep_file_fix());
  if (!file) return std::nullopt;
  const std::string text = read_whole(*file, path, json_document_limit(), "a manifest");
  const std::string start_over = "start the sweep over with " + option("overwrite") + spell(" = true", "=True") +
                                 " instead of " + option("resume");
  Json stored;
  try {
    stored = parse_ordered_json(text);
  } catch (const JsonTextError& e) {
    throw ConfigError("cannot resume from '" + path + "': it is not a kscope manifest (" + e.what() +
                      "); remove it, or " + start_over);
  }
  const auto version = stored.is_object() ? stored.find("manifest_version") : stored.end();
  const auto strings = [](const Json& j) {
    return j.is_array() && std::all_of(j.begin(), j.end(), [](const Json& e) { return e.is_string(); });
  };
  if (!stored.is_object() || !stored.contains("identity") || !stored["identity"].is_object() ||
      !strings(stored.value("axes", Json())) || !stored.value("configs", Json()).is_array())
    throw ConfigError("cannot resume from '" + path + "': it is not a kscope manifest (it lacks \"identity\", "
                      "\"axes\" or \"configs\"); remove it, or " + start_over);
  if (version == stored.end() || *version != kManifestVersion) {
    const auto writer = stored.find("kscope_version");
    throw ConfigError("cannot resume from '" + path + "': it was written by kscope " +
                      (writer != stored.end() && writer->is_string() ? cut(writer->get<std::string>())
                                                                     : std::string("(unknown version)")) +
                      ", which recorded how the sweep is measured differently; finish the sweep with that kscope, "
                      "or " + start_over);
  }
  return stored;
}

void SampleStream::check_same_sweep(const Json& stored, const Json& now) const {
  if (const auto different = differences(stored, now, configs_); !different.empty()) {
    std::string list;
    for (const auto& d : different) list += (list.empty() ? "" : "; ") + d;
    throw ConfigError("cannot resume the sweep under '" + prefix_ + "': it was measured differently (" + list +
                      "). Resume it with the same GPU, settings and sweep; or start it over with " + option("overwrite") +
                      spell(" = true", "=True") + " instead of " + option("resume") + " (its files are replaced), or "
                      "give another " + option("output_prefix"));
  }
}

// Both files are read a record at a time, and each finished config's samples go to the
// aggregator once they are checked: resuming a sweep holds what measuring it held.
SampleStream::ReadBack SampleStream::read_back(Aggregator& aggregator) {
  const std::string samples_path = prefix_ + kSamplesFile;
  const std::string progress_path = prefix_ + kProgressFile;
  std::optional<InputFile> samples_file = InputFile::if_exists(samples_path, sweep_file_fix());
  std::istringstream none;
  ReadBack back;
  back.header = samples_header(configs_, info_columns_);
  CsvRecordReader records(samples_file ? samples_file->stream() : none, back.header.size());
  CsvRecord record;
  back.has_header = records.next(record);
  if ((back.has_header && record.fields != back.header) || records.too_long())
    throw ConfigError("cannot resume from '" + samples_path + "': its columns are not those this kscope writes (" +
                      (records.too_long() ? "its first line is longer than any kscope writes"
                                          : cut(printable(python_list(record.fields)), 300)) +
                      "); was it written by another kscope version? Start the sweep over with " + option("overwrite") +
                      spell(" = true", "=True") + " instead of " + option("resume") + ", or give another " +
                      option("output_prefix"));

  std::optional<InputFile> progress_file = InputFile::if_exists(progress_path, sweep_file_fix());
  back.has_progress = progress_file.has_value();
  back.samples_end = back.has_header ? record.end : 0;
  // Why the configs from the first line not kept on are measured again (empty: every line was kept).
  std::string dropped;
  std::string text;
  for (std::size_t number = 1; back.has_header && progress_file && dropped.empty(); ++number) {
    if (!next_line(progress_file->stream(), text, kMaxProgressLine)) {
      if (text.size() == kMaxProgressLine)
        dropped = "line " + std::to_string(number) + " of '" + progress_path + "' is longer than any kscope writes";
      break;
    }
    const auto line = parse_progress(text, configs_.size());
    if (!line || finished_[line->config]) {
      dropped = "line " + std::to_string(number) + " of '" + progress_path + "' is " +
                (line ? "config " + std::to_string(line->config + 1) + " again" : "not a progress line kscope writes") +
                " (edited, or written by something else)";
      break;
    }
    if (!read_samples(records, record, *line, configs_[line->config], info_columns_.size(), aggregator)) {
      dropped = "'" + samples_path + "' does not hold the samples '" + progress_path + "' lists after the first " +
                std::to_string(back.configs) + " finished configs";
      break;
    }
    aggregator.set_config_outcome(line->config, line->converged, line->thermal_pauses);
    finished_[line->config] = true;
    if (line->samples) back.samples_end = record.end;
    back.progress_end += text.size() + 1;
    ++back.configs;
  }
  if (!back.has_header && progress_file && next_line(progress_file->stream(), text, kMaxProgressLine))
    dropped = "'" + samples_path + "' is " + (samples_file ? "empty" : "missing") + ", but '" + progress_path +
              "' lists finished configs: their samples are gone";
  if (!dropped.empty()) log_warning(dropped + ": the configs from there on are measured again");
  return back;
}

// The files end with the last finished config, as if the sweep had stopped right after it.
void SampleStream::cut_after(const ReadBack& back) {
  const std::string samples_path = prefix_ + kSamplesFile;
  const std::string progress_path = prefix_ + kProgressFile;
  if (!back.has_header) {
    std::ostringstream text;
    write_csv(Table{back.header, {}}, text);
    write_whole(samples_path, text.str());
  } else {
    cut_durably(samples_path, back.samples_end);
  }
  if (!back.has_progress)
    write_whole(progress_path, "");
  else
    cut_durably(progress_path, back.progress_end);
}

SampleStream::~SampleStream() {
  stop_writer();
  try {
    sync();
  } catch (...) {  // the writer thread's failure included, which the sweep has reported or will not
  }
}

void SampleStream::stop_writer() noexcept {
  if (!writer_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  due_.notify_one();
  writer_.join();
}

void SampleStream::config_finished(std::size_t config_index, const Aggregator& aggregator) {
  const std::lock_guard lock(mutex_);
  throw_if_failed();
  const SampleStore& samples = aggregator.samples();
  for (std::size_t i = written_samples_; i < samples.size(); ++i) {
    rows_.append(samples, i, session_, pending_samples_);
    // A long config's rows go out as they are made, not held as text: without their progress line
    // they do not count, as a config's in flight.
    if (pending_samples_.size() >= kWriteChunk) {
      append(prefix_ + kSamplesFile, pending_samples_, false);
      pending_samples_.clear();
      unsynced_ = true;
    }
  }

  const auto& outcome = aggregator.config_outcome(config_index);
  Json line{{"config", config_index},
            {"samples", samples.size() - written_samples_},
            {"converged", outcome.converged ? Json(*outcome.converged) : Json(nullptr)},
            {"thermal_pauses", outcome.thermal_pauses}};
  if (!info_columns_.empty()) {
    Json info = Json::array();
    for (std::size_t i = written_samples_; i < samples.size(); ++i) {
      Json cells = Json::array();
      for (const auto& cell : samples.info(samples.info_of(i))) cells.push_back(cell_json(cell));
      info.push_back(std::move(cells));
    }
    line["info"] = std::move(info);
  }
  const auto now = Clock::now();
  if (pending_progress_.empty()) first_pending_ = now;
  pending_progress_ += line.dump() + "\n";
  written_samples_ = samples.size();

  if (!writer_.joinable()) {
    write_pending(true);
    return;
  }
  if (now - last_write_ >= kWriteWindow || pending_samples_.size() >= kWriteChunk)
    write_pending(false);
  else
    due_.notify_one();  // the writer thread writes it when due, whatever the next config takes
}

void SampleStream::write_when_due() {
  std::unique_lock lock(mutex_);
  while (!stopping_ && !failed_) {
    std::optional<Clock::time_point> due;
    if (!pending_progress_.empty()) due = first_pending_ + kWriteWindow;
    if (unsynced_) due = std::min(due.value_or(Clock::time_point::max()), last_sync_ + fsync_interval_);
    if (!due)
      due_.wait(lock);
    else
      due_.wait_until(lock, *due);
    if (stopping_) break;
    try {
      const auto now = Clock::now();
      if (!pending_progress_.empty() && now >= first_pending_ + kWriteWindow) write_pending(false);
      if (unsynced_ && now >= last_sync_ + fsync_interval_) sync_files();
    } catch (...) {  // the sweep's thread throws it, at its next call
      failed_ = std::current_exception();
    }
  }
}

void SampleStream::throw_if_failed() const {
  if (failed_) std::rethrow_exception(failed_);
}

void SampleStream::write_pending(bool durably) {
  // The samples before the lines that say they are there; with `durably`, on the disk before.
  append(prefix_ + kSamplesFile, pending_samples_, durably);
  append(prefix_ + kProgressFile, pending_progress_, durably);
  pending_samples_.clear();
  pending_progress_.clear();
  last_write_ = Clock::now();
  unsynced_ = !durably;
  if (durably) last_sync_ = last_write_;
}

void SampleStream::sync() {
  const std::lock_guard lock(mutex_);
  throw_if_failed();
  sync_files();
}

void SampleStream::sync_files() {
  if (!pending_progress_.empty()) {
    write_pending(true);
    return;
  }
  if (!unsynced_) return;
  for (const char* name : {kSamplesFile, kProgressFile}) File(prefix_ + name, O_WRONLY).sync();
  unsynced_ = false;
  last_sync_ = Clock::now();
}

}  // namespace kscope::detail
