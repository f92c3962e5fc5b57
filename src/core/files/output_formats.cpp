// What the output formats' table (core/files/output_formats.hpp) gives the rest of kscope: the files of
// an output prefix, and their writing.
#include "core/files/output_formats.hpp"

#include <algorithm>
#include <cstring>

namespace kscope::detail {

std::vector<std::string> result_files() {
  std::vector<std::string> files;
  for (const OutputFormat& format : output_formats())
    if (format.prefix_file) files.emplace_back(format.prefix_file);
  return files;
}

namespace {

// "<prefix>{a,b}"
std::string files_text(const std::string& prefix, const std::vector<std::string>& files) {
  std::string text;
  for (const std::string& file : files) text += (text.empty() ? "" : ",") + file;
  return prefix + "{" + text + "}";
}

}  // namespace

std::string result_files_text(const std::string& prefix) { return files_text(prefix, result_files()); }

std::string comparison_files_text(const std::string& prefix) {
  return files_text(prefix, derived_prefix_files(comparison_formats()));
}

void write_result_files(const Results& results, const std::string& prefix, bool samples_streamed,
                        const std::vector<std::string>& written_after) {
  for (const OutputFormat& format : output_formats())
    if (format.prefix_file && !(samples_streamed && std::strcmp(format.prefix_file, kSamplesFile) == 0) &&
        std::find(written_after.begin(), written_after.end(), format.prefix_file) == written_after.end())
      format.write(results, prefix + format.prefix_file);
}

}  // namespace kscope::detail

namespace kscope {

void Results::write_all(const std::string& prefix) const { detail::write_result_files(*this, prefix, false); }

void Comparison::write_all(const std::string& prefix) const {
  detail::write_derived_files(*this, detail::comparison_formats(), detail::directory_as_prefix(prefix));
}

}  // namespace kscope
