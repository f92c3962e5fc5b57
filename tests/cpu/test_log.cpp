// The logger's sink (core/model/log.hpp), the path of every engine message in a front end: warnings with
// their kind whatever the verbosity, information as the verbosity allows, progress as console text.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/log.hpp"
#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;

namespace {

// Everything the engine says while it is installed.
struct RecordingSink : detail::LogSink {
  std::vector<std::pair<detail::WarningKind, std::string>> warnings;
  std::vector<std::string> lines;
  std::string console;
  bool terminal = false;
  bool escalate = false;  // as Python's -W error

  void warning(detail::WarningKind kind, const std::string& message) override {
    if (escalate) throw std::runtime_error("escalated: " + message);
    warnings.emplace_back(kind, message);
  }
  void line(detail::LogLevel, const std::string& text) override { lines.push_back(text); }
  void write(const std::string& text) override { console += text; }
  bool is_terminal() override { return terminal; }
};

// Installs a RecordingSink for the scope of the test.
struct Installed {
  std::shared_ptr<RecordingSink> sink = std::make_shared<RecordingSink>();
  Installed() { detail::set_log_sink(sink); }
  ~Installed() { detail::set_log_sink(nullptr); }
};

Settings with_verbosity(Verbosity v) {
  Settings s;
  s.runs = 2;
  s.verbosity = v;
  return s;
}

}  // namespace

TEST(LogSink, WarningsReachItWhateverTheVerbosityAndInformationAsTheVerbosityAllows) {
  Installed installed;
  {
    detail::LogScope quiet(Verbosity::quiet);
    detail::log_warning("files replaced");
    detail::log_warning("a collector failed", detail::WarningKind::run);
    detail::log_info("not shown when quiet");
  }
  detail::log_info("shown at info");
  detail::log_debug("not shown at info");
  const auto& w = installed.sink->warnings;
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], std::pair(detail::WarningKind::setup, std::string("files replaced")));
  EXPECT_EQ(w[1], std::pair(detail::WarningKind::run, std::string("a collector failed")));
  EXPECT_EQ(installed.sink->lines, std::vector<std::string>{"[kscope] shown at info"});
}

TEST(LogSink, ProgressIsWrittenToItsConsole) {
  Installed installed;
  SimulatedBackend backend;
  const auto body = [&](const Config&) {
    Annotation a("k");
    backend.launch("kern", 1);
  };
  profile_with_backend(Sweep().axis("n", {1, 2}), with_verbosity(Verbosity::info), body, backend);
  const std::string& lines = installed.sink->console;  // not a terminal: a line per config
  EXPECT_NE(lines.find("[kscope] config 1/2 (n=1): 3 runs in "), std::string::npos) << lines;
  EXPECT_NE(lines.find("[kscope] profiled 2 configs in "), std::string::npos) << lines;
  EXPECT_EQ(lines.find('\r'), std::string::npos) << lines;

  installed.sink->console.clear();
  installed.sink->terminal = true;  // a terminal: the bar, redrawn in place
  profile_with_backend(Sweep().axis("n", {1, 2}), with_verbosity(Verbosity::info), body, backend);
  EXPECT_NE(installed.sink->console.find("\r[kscope] ["), std::string::npos) << installed.sink->console;

  installed.sink->console.clear();
  profile_with_backend(Sweep().axis("n", {1, 2}), with_verbosity(Verbosity::quiet), body, backend);
  EXPECT_EQ(installed.sink->console, "");
}

// A front end that turns a warning into an error (Python's -W error): the run that warned fails.
TEST(LogSink, AWarningTheSinkRaisesFailsTheSweep) {
  Installed installed;
  installed.sink->escalate = true;
  SimulatedBackend backend;
  try {
    profile_with_backend(Sweep(), with_verbosity(Verbosity::quiet), [&](const Config&) {
      annotate("flaky", [] { throw std::runtime_error("transient"); }, {.ignore_failures = true});
    }, backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("escalated: annotation 'flaky' failed"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(backend.session_open());
}
