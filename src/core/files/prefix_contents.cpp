#include "core/files/prefix_contents.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <system_error>

#include "base/csv.hpp"
#include "base/file_access.hpp"
#include "base/json_text.hpp"
#include "core/model/caller_language.hpp"
#include "core/files/output_formats.hpp"
#include "kscope/errors.hpp"
#include "kscope/shard.hpp"

namespace kscope::detail {
namespace {

// A finished race's mark: the first file its formats write (core/decisions/race.hpp), its table.
const std::string& race_file() {
  static const std::string file = derived_prefix_files(race_formats()).front();
  return file;
}
constexpr const char* kRaceOptionsFile = "race-options.json";  // written as the race starts
constexpr const char* kNcuReport = "ncu_report.ncu-rep";
// Longer than any header of samples.csv.
constexpr std::uint64_t kMaxHeaderBytes = 1 << 20;

// The files of one streamed sweep under its prefix: the stream's, every output format's, and
// Backend::ncu's report.
std::vector<std::string> sweep_file_names() {
  std::vector<std::string> names = {kManifestFile, kProgressFile, kSamplesFile};
  for (std::string& file : result_files())
    if (file != kSamplesFile) names.push_back(std::move(file));
  names.emplace_back(kNcuReport);
  return names;
}

std::string round_prefix(const std::string& prefix, std::size_t round) {
  return prefix + "round-" + std::to_string(round) + "-";
}

bool exists(const std::string& path) {
  struct stat status {};
  return ::lstat(path.c_str(), &status) == 0;
}

bool any_exists(const std::string& prefix) {
  const auto names = sweep_file_names();
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return exists(prefix + n); });
}

// Whether the text is a samples.csv header: its first column is "Annotation".
bool is_samples_header(const std::string& line) {
  std::istringstream in(line + "\n");
  CsvRecordReader records(in, 1);
  CsvRecord record;
  return records.next(record) && !record.fields.empty() && record.fields.front() == "Annotation";
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// Whether a file records nothing: an empty progress.jsonl, a samples.csv holding its header alone.
bool records_nothing(const std::string& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return false;
  if (ends_with(path, kProgressFile)) return status.st_size == 0;
  if (!ends_with(path, kSamplesFile) || static_cast<std::uint64_t>(status.st_size) > kMaxHeaderBytes) return false;
  const std::string text = text_if_readable(path, kMaxHeaderBytes);
  if (text.empty()) return status.st_size == 0;
  const auto lines = std::count(text.begin(), text.end(), '\n');
  return lines == 1 && text.back() == '\n' && is_samples_header(text.substr(0, text.size() - 1));
}

// The line breaks of a file, read a block at a time; 0 when it cannot be read.
std::size_t lines_of(const std::string& path) {
  try {
    auto in = InputFile::if_exists(path, "a file");
    std::size_t lines = 0;
    char block[1 << 16];
    while (in && (in->stream().read(block, sizeof block) || in->stream().gcount() > 0))
      lines += static_cast<std::size_t>(std::count(block, block + in->stream().gcount(), '\n'));
    return lines;
  } catch (const FileError&) {
    return 0;
  }
}

[[noreturn]] void not_a_file(const std::string& path, const std::string& what, int error = 0) {
  throw FileError("cannot write '" + path + "' under " + option("output_prefix") + ": it is " + what +
                      ", not a file kscope wrote there. kscope never writes, replaces or moves the files of an output "
                      "prefix through such a path (it would write into what it names): remove it, or give another " +
                      option("output_prefix"),
                  path, error ? std::error_code(error, std::generic_category()) : std::error_code());
}

// The finished or unfinished sweep or evaluation whose manifest is under `prefix`; unknown when
// the manifest is not one kscope writes.
PrefixContents measured(const std::string& prefix) {
  PrefixContents c;
  try {
    const auto manifest = parse_json(text_if_readable(prefix + kManifestFile, json_document_limit()));
    const auto configs = manifest.is_object() ? manifest.find("configs") : manifest.end();
    if (configs == manifest.end() || !configs->is_array()) throw JsonTextError("no configs");
    const std::string kind = manifest.value("kind", to_string(ResultKind::sweep));
    if (kind == to_string(ResultKind::evaluation)) c.kind = ResultKind::evaluation;
    else if (kind != to_string(ResultKind::sweep)) throw JsonTextError("another kind");
    // A shard measures its own configs of the sweep's (kscope/shard.hpp).
    std::size_t own = configs->size();
    const auto identity = manifest.value("identity", nlohmann::json::object());
    if (const auto shard = identity.find("shard"); shard != identity.end() && shard->is_string()) {
      const Shard s = parse_shard(shard->get<std::string>(), "the manifest");
      own = 0;
      for (std::size_t i = 0; i < configs->size(); ++i) own += s.measures(i);
    }
    const std::size_t done = lines_of(prefix + kProgressFile);
    c.state = done >= own ? PrefixContents::State::finished : PrefixContents::State::unfinished;
    c.description = done >= own ? "a finished " + to_string(c.kind)
                                : "an unfinished " + to_string(c.kind) + " (" + std::to_string(done) + " of " +
                                      std::to_string(own) + " configs measured: killed, interrupted or failed)";
  } catch (const std::exception&) {  // a JsonTextError, or a manifest of other members
    c.state = PrefixContents::State::unknown;
  }
  return c;
}

// The rounds of a race whose files are under `prefix`: 0 when none is.
std::size_t rounds_under(const std::string& prefix) {
  std::size_t rounds = 0;
  while (any_exists(round_prefix(prefix, rounds + 1))) ++rounds;
  return rounds;
}

// Whether `name` (a path in a prefix's directory) is `prefix`'s file of some kind, or a round's.
bool is_file_of(const std::string& prefix, const std::string& name) {
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  std::string rest = name.substr(prefix.size());
  if (rest.rfind("round-", 0) == 0) {
    const std::size_t digits = rest.find_first_not_of("0123456789", 6);
    if (digits == 6 || digits == std::string::npos || rest[digits] != '-') return false;
    rest = rest.substr(digits + 1);
  } else if (rest == race_file() || rest == kRaceOptionsFile) {
    return true;
  }
  const auto names = sweep_file_names();
  return std::find(names.begin(), names.end(), rest) != names.end();
}

// The N of "<path>.~N~", 0 for any other name.
unsigned backup_number(const std::string& name, std::string& original) {
  if (name.size() < 4 || name.back() != '~') return 0;
  const std::size_t open = name.rfind(".~", name.size() - 2);
  if (open == std::string::npos || open + 2 >= name.size() - 1) return 0;
  const std::string digits = name.substr(open + 2, name.size() - open - 3);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos || digits[0] == '0') return 0;
  original = name.substr(0, open);
  return static_cast<unsigned>(std::stoul(digits));
}

std::string directory_part(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

}  // namespace

std::string to_string(ResultKind kind) { return enum_name(kind); }

std::string with_article(ResultKind kind) {
  switch (kind) {
    case ResultKind::sweep: return "a sweep";
    case ResultKind::evaluation: return "an evaluation";
    case ResultKind::race: return "a race";
    case ResultKind::merge: return "merged results";
  }
  return "?";
}

void check_prefix_file(const std::string& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0 || S_ISREG(status.st_mode)) return;
  if (S_ISLNK(status.st_mode)) {
    std::error_code error;
    const auto target = std::filesystem::read_symlink(path, error);
    not_a_file(path, "a symbolic link" + (error ? std::string() : " (to '" + target.string() + "')"));
  }
  if (S_ISDIR(status.st_mode)) not_a_file(path, "a directory", EISDIR);
  not_a_file(path, kind_of_file(path).empty() ? "not a regular file" : kind_of_file(path));
}

std::vector<std::string> files_of(ResultKind kind, const std::string& prefix) {
  std::vector<std::string> files;
  if (kind == ResultKind::race) {
    for (const std::string& file : derived_prefix_files(race_formats())) files.push_back(prefix + file);
    files.push_back(prefix + kRaceOptionsFile);
    for (const std::string& file : result_files()) files.push_back(prefix + file);
    for (std::size_t k = 1, rounds = rounds_under(prefix); k <= rounds; ++k)
      for (const std::string& file : sweep_file_names()) files.push_back(round_prefix(prefix, k) + file);
    return files;
  }
  const std::vector<std::string> names = kind == ResultKind::merge ? result_files() : sweep_file_names();
  for (const std::string& file : names) files.push_back(prefix + file);
  return files;
}

PrefixContents prefix_contents(const std::string& prefix) {
  const std::vector<std::string> race = files_of(ResultKind::race, prefix);
  const std::vector<std::string> sweep = files_of(ResultKind::sweep, prefix);
  for (const auto* paths : {&sweep, &race})
    for (const std::string& path : *paths) check_prefix_file(path);
  const auto holding = [](const std::vector<std::string>& paths) {
    std::vector<std::string> found;
    for (const std::string& path : paths)
      if (exists(path) && !records_nothing(path)) found.push_back(path);
    return found;
  };
  using State = PrefixContents::State;
  PrefixContents c;
  if (const std::size_t rounds = rounds_under(prefix);
      rounds || exists(prefix + race_file()) || exists(prefix + kRaceOptionsFile)) {
    c.kind = ResultKind::race;
    c.files = holding(race);
    c.state = exists(prefix + race_file()) ? State::finished : State::unfinished;
    c.description = c.state == State::finished
                        ? "a finished race"
                        : "an unfinished race (" + std::to_string(rounds) + (rounds == 1 ? " round" : " rounds") +
                              " started: killed, interrupted or failed)";
    return c;
  }
  c.files = holding(sweep);
  if (c.files.empty()) return c;
  if (exists(prefix + kManifestFile)) {
    const PrefixContents m = measured(prefix);
    c.state = m.state;
    c.kind = m.kind;
    c.description = m.state == State::unknown ? "files whose " + std::string(kManifestFile) +
                                                    " is not a manifest kscope writes"
                                              : m.description;
  } else if (exists(prefix + kNcuReport)) {  // Backend::ncu writes its files at the end, without a manifest
    c.state = exists(prefix + kResultsFile) ? State::finished : State::unfinished;
    c.description = c.state == State::finished ? "a finished sweep"
                                               : "an unfinished sweep (Nsight Compute's report without its results)";
  } else if (exists(prefix + kResultsFile)) {
    c.kind = ResultKind::merge;
    c.state = State::finished;
    c.description = "merged results";
  } else {
    c.state = State::unknown;
    c.description = "files no kscope result is known by (no " + std::string(kManifestFile) + ", " + kResultsFile +
                    " or " + race_file() + " says what wrote them)";
  }
  return c;
}

unsigned back_up(const std::string& prefix, const std::vector<std::string>& files) {
  std::set<std::string> directories{directory_part(prefix)};
  for (const std::string& file : files) directories.insert(directory_part(file));
  const std::set<std::string> named(files.begin(), files.end());
  unsigned highest = 0;
  for (const std::string& directory : directories) {
    DIR* listing = ::opendir(directory.empty() ? "." : directory.c_str());
    if (!listing) continue;
    while (const dirent* entry = ::readdir(listing)) {
      std::string original;
      const unsigned n = backup_number(directory + entry->d_name, original);
      if (n > highest && (named.count(original) || is_file_of(prefix, original))) highest = n;
    }
    ::closedir(listing);
  }
  const unsigned number = highest + 1;
  const std::string suffix = ".~" + std::to_string(number) + "~";
  std::vector<std::string> moved;
  for (const std::string& file : files) {
    if (::rename(file.c_str(), (file + suffix).c_str()) == 0) {
      moved.push_back(file);
      continue;
    }
    const int error = errno;
    for (const std::string& back : moved) ::rename((back + suffix).c_str(), back.c_str());
    throw FileError("cannot move '" + file + "' aside to '" + file + suffix + "': " + std::strerror(error) +
                        " (the files moved before it are back in place)",
                    file, std::error_code(error, std::generic_category()));
  }
  return number;
}

void remove_files(const std::vector<std::string>& files, const std::string& why) {
  for (const std::string& file : files)
    if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
      const int error = errno;
      throw FileError("cannot remove '" + file + "' " + why + ": " + std::strerror(error), file,
                      std::error_code(error, std::generic_category()));
    }
}

std::span<const EnumName<ResultKind>> enum_names(ResultKind) {
  using K = ResultKind;
  static constexpr EnumName<K> names[] = {
      {K::sweep, "sweep"}, {K::evaluation, "evaluation"}, {K::race, "race"}, {K::merge, "merge"}};
  return names;
}

}  // namespace kscope::detail
