#pragma once
// The results file: written, and read back.
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "kscope/results.hpp"

namespace kscope::detail {

// The results file of `results`, with `more` writing further members (",\n \"key\": value") before
// its closing brace (an Evaluation's section).
void write_results(const Results& results, std::ostream& out, const std::function<void(std::ostream&)>& more);
// The text of the results file at `path`: a regular file of at most json_document_limit() bytes
// (base/file_access.hpp), else FileError; `expected` says what to give instead.
std::string read_results_text(const std::string& path, const std::string& expected);
// What writes results files, as the caller names it ("ProfileResults.save"), for messages.
std::string results_writer();
// A results file's document (from the stream `in`, or its text), its format and version checked:
// JSON of any content is a ConfigError naming `file` and `writer` (what writes the file expected),
// never a crash; the Results it holds.
nlohmann::json read_results_document(std::istream& in, const std::string& file,
                                     const std::string& writer = results_writer());
nlohmann::json parse_results_document(const std::string& text, const std::string& file,
                                      const std::string& writer = results_writer());
Results results_from(const nlohmann::json& doc, const std::string& file, const std::string& writer = results_writer());

}  // namespace kscope::detail
