#pragma once
// Results' output formats, one table: each format's name, its file under an output prefix, and the
// function that writes it. Results holds the data; its write_* members are the formats' entry
// points, written in io/ (io/results_writers.cpp defines the table there). Everything that writes or
// names the files of an output prefix reads the table: Results::write_all, a finished or stopped
// sweep's results, merged results, the refusal of an earlier sweep's files, the removal of a
// replaced sweep's, and the messages and help that name them.
#include <ostream>
#include <string>
#include <vector>

#include "base/file_access.hpp"
#include "kscope/compare.hpp"
#include "kscope/detail/result_files.hpp"
#include "kscope/evaluate.hpp"
#include "kscope/results.hpp"
#include "kscope/tune.hpp"

namespace kscope::detail {

struct OutputFormat {
  const char* format;       // what it writes, as the documentation names it
  const char* prefix_file;  // its file under an output prefix; nullptr: written only when asked for
  void (*write)(const Results& results, const std::string& path);
};

// The files a streamed sweep writes as it goes (core/engine/sample_stream.*): its manifest and progress
// lines, and the samples CSV format's file, to which it appends each finished config's samples.
inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kProgressFile = "progress.jsonl";
inline constexpr const char* kSamplesFile = "samples.csv";
// The kscope results format's file, which load_results reads back.
inline constexpr const char* kResultsFile = "results.json";

// Every output format: kscope's own (in the order write_all writes them), then the registered ones.
std::vector<OutputFormat> output_formats();

// Adds a format to the table for the rest of the process (a program's own, or a test's). Throws
// ConfigError for a format without a name or writer, or a name or prefix file taken already.
void register_output_format(OutputFormat format);

// Writes the prefix file of each format that has one; `samples_streamed`: the samples file holds
// every sample already (a streamed sweep appended them), so it is not written again.
// `written_after`: prefix files the caller writes itself once the session is over, in place of the
// format's (an evaluation's results file, which holds its verdicts too: DerivedFormat).
void write_result_files(const Results& results, const std::string& prefix, bool samples_streamed,
                        const std::vector<std::string>& written_after = {});

// A derived result's formats (an evaluation's, a race's, a comparison's), as Results' are: each
// format's name, its file under an output prefix (nullptr: written only when asked for), and its
// writer. Each kind keeps its table beside its columns (core/model/derived_columns.hpp): a
// `const std::vector<DerivedFormat<Kind>>&` that the functions below read.
template <class Result>
struct DerivedFormat {
  const char* format;
  const char* prefix_file;
  void (*write)(const Result& result, const std::string& path);
};

// The writer of a format that is the result's table (`table`: its member that makes it) as CSV.
template <class Result, auto table>
void write_table_csv(const Result& result, const std::string& path) {
  write_whole(path, [&](std::ostream& out) { write_csv((result.*table)(), out); });
}

// Each kind's formats, declared here so that the files room reads them, defined by the kind:
// a race's (core/decisions/tune.cpp): its table's file first (race.csv), which marks a finished race;
// an evaluation's (core/decisions/evaluate.cpp): its results file, the measurements' with the verdicts,
// written once the session is over in place of the session's.
// a comparison's (core/decisions/compare.cpp): its table as CSV and its JSON, which
// Comparison::write_all writes under a prefix (kscope compare --output-prefix, Python's
// compare(output_prefix=)).
const std::vector<DerivedFormat<Race>>& race_formats();
const std::vector<DerivedFormat<Evaluation>>& evaluation_formats();
const std::vector<DerivedFormat<Comparison>>& comparison_formats();

// The files the result's formats write under an output prefix ("race.csv"), in their order.
template <class Result>
std::vector<std::string> derived_prefix_files(const std::vector<DerivedFormat<Result>>& formats) {
  std::vector<std::string> files;
  for (const DerivedFormat<Result>& format : formats)
    if (format.prefix_file) files.emplace_back(format.prefix_file);
  return files;
}

// Writes the prefix file of each of the result's formats that has one.
template <class Result>
void write_derived_files(const Result& result, const std::vector<DerivedFormat<Result>>& formats,
                         const std::string& prefix) {
  for (const DerivedFormat<Result>& format : formats)
    if (format.prefix_file) format.write(result, prefix + format.prefix_file);
}

}  // namespace kscope::detail
