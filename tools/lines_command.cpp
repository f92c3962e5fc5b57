#include "lines_command.hpp"

#include <ostream>
#include <string>

#include "command_line.hpp"
#include "kscope/detail/caller.hpp"
#include "kscope/errors.hpp"
#include "kscope/lines.hpp"

namespace {

constexpr int kCannotRead = 2;

const char* const kUsage = "usage: kscope lines FILE [--top N] | kscope lines BASELINE CANDIDATE [--top N]\n";

const char* const kDescription =
    "Which line is slow, from a saved line sampling (LineResults.save in Python, LineResults::write_json\n"
    "in C++): each kernel's most sampled source lines with their share of the kernel's samples, their\n"
    "dominant stall reason (Nsight Compute's names) and their text. With two files, each line's share in\n"
    "both, the largest changes first.";

const char* const kFooter =
    "Exit status:\n"
    "  0   printed\n"
    "  2   a file cannot be read, or is not a line sampling's\n"
    "  64  bad command line\n"
    "  74  the output could not be written\n";

}  // namespace

int lines_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const kscope::detail::CallerScope caller(kscope::detail::Caller::command_line);
  CLI::App app{kDescription, "kscope lines"};
  app.footer(kFooter);
  std::vector<std::string> files;
  std::size_t top = 10;
  app.add_option("FILE", files, "a saved line sampling; two to compare (baseline first)")
      ->required()->expected(1, 2)->type_name("");
  app.add_option("--top", top, "lines per kernel (default 10)")->check(CLI::PositiveNumber);
  if (const auto status = kscope::cli::parse(app, args, out, err, kUsage)) return *status;
  try {
    const kscope::LineResults first = kscope::load_line_results(files[0]);
    if (files.size() == 1) {
      out << first.listing(top) << "\n";
      return 0;
    }
    kscope::Table changes = kscope::compare_lines(first, kscope::load_line_results(files[1]));
    if (changes.rows.size() > top) changes.rows.resize(top);
    kscope::write_console(changes, out);
    return 0;
  } catch (const kscope::Error& e) {
    err << "kscope lines: " << e.what() << "\n";
    return kCannotRead;
  }
}
