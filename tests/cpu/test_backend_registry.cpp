// The backend registry: a backend added through register_backend() alone, with no change to
// kscope's files, is chosen by name, measures a sweep through profile(), is saved and read back
// under its name, and has its row in kscope doctor; and the registry's own rules.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "kscope/annotation.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/doctor.hpp"
#include "kscope/errors.hpp"
#include "kscope/evaluate.hpp"
#include "kscope/profile.hpp"
#include "kscope/results.hpp"
#include "kscope/tune.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope_test::error_of;

namespace {

constexpr const char* kToyMetric = "toy__host_duration";

// A toy backend: each region's duration on the host's steady clock. No GPU, no kernel names.
class HostClockBackend final : public MeasurementBackend {
 public:
  std::vector<MetricSpec> metrics() const override { return {{kToyMetric, "ns", "host time of the region"}}; }
  SessionInfo describe() const override {
    SessionInfo info;
    info.backend = Backend::named("toy");
    info.gpu = "the host";
    info.host = "toy";
    return info;
  }
  void begin_session(const Settings&) override {}
  void end_session() noexcept override {}
  void flush_cache() override {}
  void region_begin(const RegionContext&) override { started_ = std::chrono::steady_clock::now(); }
  void region_end(const RegionContext&) override {
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - started_;
    run_.push_back({KernelMeasurement{"", {took.count()}}});
  }
  void end_run(const RunContext&, const std::vector<RegionRecord>&) override { runs_.push_back(std::move(run_)); }
  std::vector<RunMeasurement> collect_batch() override { return std::exchange(runs_, {}); }
  void abandon_run(const RunContext&) noexcept override { run_.clear(); }

 private:
  std::chrono::steady_clock::time_point started_;
  RunMeasurement run_;
  std::vector<RunMeasurement> runs_;
};

// Calls of the toy's check: Settings::validate makes it, so they count the settings' validations.
std::atomic<int> toy_checks{0};

// Registered once per process, by the test that needs it.
Backend toy() {
  static const Backend registered = register_backend({
      .name = "toy",
      .python_name = "toy",
      .summary = "region durations on the host's clock",
      .default_metrics = {kToyMetric},
      .capabilities = {.measures_duration = true, .replay_modes = false},
      .check = [](const Settings&) { ++toy_checks; },
      .make = [](const Settings&) { return std::make_unique<HostClockBackend>(); },
      .assess = [](const DoctorFacts&) { return BackendAvailability{Backend(), true, "the host's clock is always there"}; },
  });
  return registered;
}

Results toy_sweep(Settings settings) {
  settings.runs = 3;
  settings.warmup_runs = 0;
  settings.verbosity = Verbosity::quiet;
  return profile(Sweep().axis("ms", {1, 2}), settings, [](const Config& c) {
    Annotation region("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(c.get<std::int64_t>("ms")));
  });
}

}  // namespace

TEST(BackendRegistry, AToyBackendMeasuresASweepThroughProfile) {
  toy();
  Settings settings;
  settings.backend = Backend::named("toy");  // as a user chooses it
  const Results r = toy_sweep(settings);
  EXPECT_EQ(r.session().backend, toy());
  EXPECT_EQ(r.session().metrics, std::vector<std::string>{kToyMetric});
  ASSERT_EQ(r.rows().size(), 2u);
  for (const SummaryRow& row : r.rows()) {
    EXPECT_EQ(row.metric, kToyMetric);
    // The region slept 1 or 2 ms: the host clock saw at least that.
    EXPECT_GE(row.stats.min, 1e6 * static_cast<double>(row.config_index + 1)) << row.config_index;
  }
  const Table summary = r.summary_table();
  const auto backend_column = std::find(summary.columns.begin(), summary.columns.end(), "Backend");
  ASSERT_NE(backend_column, summary.columns.end());
  EXPECT_EQ(summary.rows[0][static_cast<std::size_t>(backend_column - summary.columns.begin())], Cell{std::string("toy")});

  // Saved and read back under its name, as Settings::backend and as what measured.
  kscope_test::TempDir dir;
  r.write_json(dir.prefix("toy.json"));
  const Results loaded = load_results(dir.prefix("toy.json"));
  EXPECT_EQ(loaded.session().backend, toy());
  EXPECT_EQ(loaded.settings().backend, toy());
}

TEST(BackendRegistry, TheDefaultChoosesAToyDurationBackendForItsOwnMetric) {
  Settings settings;
  settings.metrics = {"toy__host_duration"};
  EXPECT_EQ(chosen_backend(settings), toy());
  EXPECT_EQ(toy_sweep(settings).session().backend, toy());
  // Its one metric is measured alone, as cupti's and events' are.
  settings.backend = toy();
  settings.metrics = {"dram__bytes_read.sum"};
  EXPECT_NE(error_of([&] { toy_sweep(settings); }).find("the toy backend measures only 'toy__host_duration'"),
            std::string::npos);
}

TEST(BackendRegistry, ProfileValidatesTheSettingsOncePerCall) {
  Settings settings;
  settings.backend = toy();
  settings.info_collectors = {{"host", CollectionScope::once, [](const CollectionContext&) { return Cell{std::string("toy")}; }}};
  const int before = toy_checks;
  toy_sweep(settings);
  EXPECT_EQ(toy_checks - before, 1);
  settings.verbosity = Verbosity::quiet;
  HostClockBackend given;
  profile_with_backend(Sweep().axis("n", {1}), settings, [](const Config&) { Annotation region("r"); }, given);
  EXPECT_EQ(toy_checks - before, 2);
}

TEST(BackendRegistry, KscopeDoctorListsAToyBackend) {
  toy();
  const DoctorReport report = assess(DoctorFacts{});
  ASSERT_FALSE(report.backends.empty());
  const BackendAvailability& last = report.backends.back();
  EXPECT_EQ(last.backend, toy());
  EXPECT_TRUE(last.available);
  EXPECT_NE(to_text(report).find("toy        available (the host's clock is always there)"), std::string::npos)
      << to_text(report);
  EXPECT_NE(to_json(report).find("\"backend\": \"toy\""), std::string::npos);
}

TEST(BackendRegistry, ListsKscopesOwnBackendsFirstInOrder) {
  const std::vector<Backend> all = registered_backends();
  const std::vector<Backend> own{Backend::from_metrics, Backend::cupti,  Backend::events,   Backend::counters,
                                 Backend::automatic,    Backend::ncu,    Backend::simulated};
  ASSERT_GE(all.size(), own.size());
  EXPECT_EQ(std::vector<Backend>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(own.size())), own);
  EXPECT_EQ(default_metrics(Backend::from_metrics), default_metrics(Backend::cupti));
  EXPECT_EQ(definition(Backend::automatic).python_name, "auto");
}

TEST(BackendRegistry, NamesAreCheckedWhereTheyAreGivenAndTaken) {
  toy();
  EXPECT_EQ(Backend::named("counters"), Backend::counters);
  const std::string unknown = error_of([] { Backend::named("toi"); });
  EXPECT_NE(unknown.find("no backend is named 'toi': the registered ones are 'from_metrics', 'cupti'"),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("'toy'"), std::string::npos) << unknown;
  EXPECT_NE(error_of([] { register_backend({.name = "toy"}); }).find("a backend named 'toy' is registered already"),
            std::string::npos);
  EXPECT_NE(error_of([] { register_backend({.name = "toy2", .python_name = "toy"}); })
                .find("the Python name 'toy' is taken by backend 'toy'"),
            std::string::npos);
  EXPECT_NE(error_of([] { register_backend({}); }).find("the backend needs a name"), std::string::npos);
  EXPECT_NE(error_of([] {
              register_backend({.name = "two_durations", .default_metrics = {"a", "b"},
                                .capabilities = {.measures_duration = true}});
            }).find("measures a duration of its own: give it as its one default metric"),
            std::string::npos);
}

// tune() and evaluate() choose their backend by the registry's capabilities, never by name: a
// registered duration backend races, and is offered where another backend is refused; one that does
// not see every stream's work is refused by evaluate() before it is made.
TEST(BackendRegistry, TuneAndEvaluateChooseByTheRegistrysCapabilities) {
  toy();
  Settings settings;
  settings.backend = Backend::named("toy");
  settings.runs = 4;
  settings.warmup_runs = 0;
  settings.verbosity = Verbosity::quiet;
  RaceOptions options;
  options.first_runs = 2;
  options.final_runs = 2;
  const Race race = tune(Sweep().axis("ms", {0, 3}), settings, [](const Config& c) {
    Annotation region("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(c.get<std::int64_t>("ms")));
  }, options);
  EXPECT_EQ(race.measurements().session().backend, toy());
  EXPECT_EQ(race.winner(), 0u);  // no sleep beats 3 ms on any host clock

  settings.backend = Backend::counters;
  const std::string counters = error_of([&] { tune(Sweep().axis("n", {1}), settings, [](const Config&) {}, options); });
  EXPECT_EQ(counters.rfind("the counters backend cannot serve tune in this process: the race decides by durations "
                           "measured in this process; tune with Backend::cupti (the default), Backend::events",
                           0),
            0u)
      << counters;
  EXPECT_NE(counters.find("Backend::toy"), std::string::npos) << counters;

  settings.backend = Backend::named("toy");
  Contest contest;
  contest.inputs = [](const Config&, std::uint64_t) { return Tensors{}; };
  contest.reference = contest.candidate = [](const Tensors&) { return Tensors{}; };
  const std::string evaluated = error_of([&] { evaluate(Sweep().axis("n", {1}), settings, contest); });
  EXPECT_EQ(evaluated.rfind("the toy backend cannot serve evaluate in this process: an evaluation times all the GPU "
                            "work a call causes, on every stream, as it runs; evaluate with Backend::cupti (the "
                            "default)",
                            0),
            0u)
      << evaluated;
}

TEST(BackendRegistry, ABackendWithoutAFactoryIsNotASettingsChoice) {
  Settings settings;
  settings.backend = Backend::simulated;
  const std::string m = error_of([&] { settings.validate(); });
  EXPECT_NE(m.find("Settings::backend is 'test (simulated)', which profile() cannot measure with"), std::string::npos)
      << m;
}
