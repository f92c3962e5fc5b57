#pragma once
// Results' output formats, one table: each format's name, its file under an output prefix, and the
// function that writes it. Results holds the data; its write_* members are the formats' entry
// points (defined in io/), and write_all (the output prefix's files: a finished or stopped sweep's,
// kscope merge's) writes every format of the table that has a prefix file.
#include <span>
#include <string>

#include "kscope/results.hpp"

namespace kscope::detail {

struct ResultsWriter {
  const char* format;       // what it writes, as the documentation names it
  const char* prefix_file;  // its file under an output prefix; nullptr: written only when asked for
  void (*write)(const Results& results, const std::string& path);
};

// Every output format, those with a prefix file first, in the order write_all writes them.
std::span<const ResultsWriter> results_writers();

}  // namespace kscope::detail
