// Sharded sweeps: which configs a shard measures, where it comes from (KSCOPE_SHARD, torchrun,
// Slurm), and kscope::merge: shards measured by separate sessions give, merged, exactly the result
// of one session over the whole sweep; shards that are not one sweep's are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/merge.hpp"
#include "kscope/profile.hpp"
#include "kscope/shard.hpp"
#include "kscope/testing.hpp"
#include "merge_command.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
using kscope_test::error_of;
using kscope_test::TempDir;
namespace fs = std::filesystem;

namespace {

// The launchers' variables for a test: those given, the others unset; restored after it.
kscope_test::ScopedEnv launcher_environment(std::initializer_list<std::pair<const char*, const char*>> given) {
  kscope_test::ScopedEnv::Variables variables;
  for (const char* name :
       {"KSCOPE_SHARD", "RANK", "WORLD_SIZE", "LOCAL_RANK", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT", "SLURM_PROCID",
        "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"})
    variables.emplace_back(name, std::nullopt);
  for (const auto& [name, value] : given) variables.emplace_back(name, value);
  return kscope_test::ScopedEnv(variables);
}

Sweep sweep_of(int configs) {
  std::vector<Value> n;
  for (int i = 1; i <= configs; ++i) n.push_back(i);
  return Sweep().axis("n", n).axis("dtype", {"f32"});
}

Settings base_settings() {
  Settings s;
  s.runs = 4;
  s.warmup_runs = 1;
  s.verbosity = Verbosity::quiet;
  s.normalize_against = "base";  // the baseline is per config; the geomeans span every config
  s.info_collectors.push_back({"run_label", CollectionScope::run, [](const CollectionContext& c) -> Cell {
                                 return static_cast<std::int64_t>(c.run * 10 + c.config->index());
                               }});
  return s;
}

// Deterministic durations, from the config and the call's number within it: a shard measures its
// configs exactly as a whole-sweep session would.
Results measure(const Settings& settings, int configs = 7, std::vector<ClockReading> clocks = {}) {
  SimulatedBackend backend;
  if (!clocks.empty()) backend.set_clock_readings(std::move(clocks));
  std::map<std::size_t, int> calls;
  const Body body = [&](const Config& c) {
    const int call = calls[c.index()]++;
    const double n = static_cast<double>(c.get<std::int64_t>("n"));
    {
      Annotation a("base");
      backend.launch("base_kernel", 50.0 * n + call % 3);
    }
    Annotation a("work");
    backend.launch("work_kernel", 100.0 * n + (call * 7) % 5);
  };
  return profile_with_backend(sweep_of(configs), settings, body, backend);
}

Results shard(std::size_t index, std::size_t count, Settings settings = base_settings(), int configs = 7) {
  settings.shard = Shard{index, count};
  return measure(settings, configs);
}

// The same session with other facts: as if measured elsewhere.
Results with_session(const Results& r, const std::function<void(SessionInfo&)>& change) {
  SessionInfo s = r.session();
  change(s);
  return Results(s, r.configs(), r.rows(), r.samples(), r.info_columns(), r.settings());
}

void expect_same_tables(const Results& a, const Results& b) {
  const Table sa = a.summary_table(), sb = b.summary_table();
  EXPECT_EQ(sa.columns, sb.columns);
  ASSERT_EQ(sa.rows.size(), sb.rows.size());
  for (std::size_t r = 0; r < sa.rows.size(); ++r) EXPECT_EQ(sa.rows[r], sb.rows[r]) << "summary row " << r;
  const Table ra = a.samples_table(), rb = b.samples_table();
  EXPECT_EQ(ra.columns, rb.columns);
  ASSERT_EQ(ra.rows.size(), rb.rows.size());
  for (std::size_t r = 0; r < ra.rows.size(); ++r) EXPECT_EQ(ra.rows[r], rb.rows[r]) << "sample row " << r;
}

}  // namespace

TEST(Shard, AssignsConfigsRoundRobin) {
  const Shard s{1, 3};
  std::vector<std::size_t> mine;
  for (std::size_t c = 0; c < 8; ++c)
    if (s.measures(c)) mine.push_back(c);
  EXPECT_EQ(mine, (std::vector<std::size_t>{1, 4, 7}));
  EXPECT_EQ(s.to_string(), "1/3");
  EXPECT_EQ(s.file_prefix(), "shard-1-of-3-");
}

TEST(Shard, ParsesIndexSlashCount) {
  EXPECT_EQ(parse_shard("3/8", "x"), (Shard{3, 8}));
  EXPECT_EQ(parse_shard("0/1", "x"), (Shard{0, 1}));
  EXPECT_NE(error_of([] { parse_shard("8/8", "KSCOPE_SHARD"); }).find("shard index 8 is not below the shard count 8"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_shard("2", "KSCOPE_SHARD"); }).find("KSCOPE_SHARD is '2', not index/count"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_shard("a/4", "x"); }).find("not index/count"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shard("0/0", "x"); }).find("the shard count is 0"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shard("-1/4", "x"); }).find("not index/count"), std::string::npos);
}

TEST(Shard, ComesFromTheLaunchersEnvironment) {
  {
    const auto env = launcher_environment({});
    EXPECT_FALSE(shard_from_environment());
  }
  {
    const auto env = launcher_environment({{"KSCOPE_SHARD", "2/5"}, {"RANK", "1"}, {"WORLD_SIZE", "4"}});
    const auto s = shard_from_environment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->shard, (Shard{2, 5}));  // KSCOPE_SHARD first: it is the user's explicit choice
    EXPECT_EQ(s->launcher, "KSCOPE_SHARD");
  }
  {
    const auto env =
        launcher_environment({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "3"}, {"SLURM_ARRAY_TASK_ID", "1"}});
    const auto s = shard_from_environment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->shard, (Shard{3, 8}));
    EXPECT_EQ(s->launcher, "torchrun");
    EXPECT_EQ(s->local_rank, 3);
  }
  {
    const auto env = launcher_environment({{"SLURM_ARRAY_TASK_ID", "7"},
                                           {"SLURM_ARRAY_TASK_MIN", "1"},
                                           {"SLURM_ARRAY_TASK_MAX", "9"},
                                           {"SLURM_ARRAY_TASK_STEP", "2"},
                                           {"SLURM_ARRAY_TASK_COUNT", "5"}});  // --array=1-9:2
    const auto s = shard_from_environment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->shard, (Shard{3, 5}));
    EXPECT_EQ(s->launcher, "Slurm job array");
    EXPECT_EQ(s->local_rank, -1);
  }
  {
    const auto env = launcher_environment({{"RANK", "4"}, {"WORLD_SIZE", "4"}});
    EXPECT_NE(error_of([] { shard_from_environment(); }).find("RANK=4, WORLD_SIZE=4: shard index 4 is not below"),
              std::string::npos);
  }
  {
    const auto env = launcher_environment({{"SLURM_ARRAY_TASK_ID", "4"},
                                           {"SLURM_ARRAY_TASK_MIN", "1"},
                                           {"SLURM_ARRAY_TASK_MAX", "9"},
                                           {"SLURM_ARRAY_TASK_STEP", "2"},
                                           {"SLURM_ARRAY_TASK_COUNT", "5"}});
    EXPECT_NE(error_of([] { shard_from_environment(); }).find("is not one of the array's evenly stepped task ids"),
              std::string::npos);
  }
  {
    // --array=0,3,7, as Slurm 22.05 describes it to task 3. Issue 42: task 0 measured shard 0/3,
    // task 3 was refused as shard 3 of 3 and task 7 as shard 7 of 3.
    for (const char* id : {"0", "3", "7"}) {
      const auto env = launcher_environment({{"SLURM_ARRAY_TASK_ID", id},
                                             {"SLURM_ARRAY_TASK_MIN", "0"},
                                             {"SLURM_ARRAY_TASK_MAX", "7"},
                                             {"SLURM_ARRAY_TASK_STEP", "1"},
                                             {"SLURM_ARRAY_TASK_COUNT", "3"}});
      const std::string error = error_of([] { shard_from_environment(); });
      EXPECT_NE(error.find("(MIN 0, MAX 7, STEP 1, COUNT 3): the array's task ids are not evenly stepped (a list such "
                           "as --array=0,3,7)"),
                std::string::npos)
          << error;
      EXPECT_NE(error.find("set KSCOPE_SHARD=$SLURM_ARRAY_TASK_ID/<number of shards> in the job script"),
                std::string::npos)
          << error;
    }
  }
  {
    // srun -n 4: each task is a shard. The batch script around it (SLURM_PROCID=0 and SLURM_NTASKS
    // of the allocation, no step of its own) and a step of one task split nothing.
    const auto env =
        launcher_environment({{"SLURM_PROCID", "2"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_NTASKS", "4"}});
    const auto s = shard_from_environment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->shard, (Shard{2, 4}));
    EXPECT_EQ(s->launcher, "srun");
  }
  {
    const auto env = launcher_environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}});
    EXPECT_FALSE(shard_from_environment());
  }
  {
    const auto env = launcher_environment({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}});
    EXPECT_FALSE(shard_from_environment());
  }
  {
    // --array=0-3 whose tasks each run srun -n 2: 8 shards, array task after array task.
    const auto env = launcher_environment({{"SLURM_ARRAY_TASK_ID", "3"},
                                           {"SLURM_ARRAY_TASK_MIN", "0"},
                                           {"SLURM_ARRAY_TASK_MAX", "3"},
                                           {"SLURM_ARRAY_TASK_STEP", "1"},
                                           {"SLURM_ARRAY_TASK_COUNT", "4"},
                                           {"SLURM_PROCID", "1"},
                                           {"SLURM_STEP_NUM_TASKS", "2"}});
    const auto s = shard_from_environment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->shard, (Shard{7, 8}));
    EXPECT_EQ(s->launcher, "Slurm job array and srun");
  }
  {
    const auto env = launcher_environment({{"SLURM_PROCID", "4"}, {"SLURM_STEP_NUM_TASKS", "4"}});
    EXPECT_NE(error_of([] { shard_from_environment(); }).find("SLURM_PROCID=4, SLURM_STEP_NUM_TASKS=4: shard index 4"),
              std::string::npos);
  }
  {
    const auto env = launcher_environment({{"SLURM_ARRAY_TASK_ID", "4"}});
    EXPECT_NE(error_of([] { shard_from_environment(); }).find("SLURM_ARRAY_TASK_MIN is not set"), std::string::npos);
  }
}

TEST(Shard, MeasuresOnlyItsConfigs) {
  const Results r = shard(1, 3);
  EXPECT_EQ(r.configs().size(), 7u);  // the whole sweep, for merging
  std::set<std::size_t> measured;
  for (const auto& s : r.samples()) measured.insert(s.config_index);
  EXPECT_EQ(measured, (std::set<std::size_t>{1, 4}));
  ASSERT_TRUE(r.settings().shard);
  EXPECT_EQ(*r.settings().shard, (Shard{1, 3}));
}

TEST(Shard, KscopeShardInTheEnvironmentShardsAnUnchangedProgram) {
  const auto env = launcher_environment({{"KSCOPE_SHARD", "0/3"}});
  const Results r = measure(base_settings());
  ASSERT_TRUE(r.settings().shard);
  EXPECT_EQ(*r.settings().shard, (Shard{0, 3}));
  std::set<std::size_t> measured;
  for (const auto& s : r.samples()) measured.insert(s.config_index);
  EXPECT_EQ(measured, (std::set<std::size_t>{0, 3, 6}));
}

TEST(Shard, SettingsRefuseABadShardAndTheNcuBackend) {
  Settings s = base_settings();
  s.shard = Shard{3, 3};
  EXPECT_NE(error_of([&] { s.validate(); }).find("Settings::shard is 3 of 3"), std::string::npos);
  s = Settings{};
  s.shard = Shard{0, 2};
  s.backend = Backend::ncu;
  EXPECT_NE(error_of([&] { s.validate(); }).find("Settings::shard does not work with"), std::string::npos);
}

TEST(Merge, ShardsGiveTheSingleSessionsResult) {
  const Results whole = measure(base_settings());
  const Results merged = merge({shard(2, 3), shard(0, 3), shard(1, 3)});
  expect_same_tables(merged, whole);
  EXPECT_EQ(merged.rows().size(), whole.rows().size());
  EXPECT_FALSE(merged.settings().shard);
  EXPECT_EQ(merged.shard_sessions().size(), 3u);
  // More shards than configs: the extra ones measure nothing and merge all the same.
  expect_same_tables(merge({shard(0, 9, base_settings(), 2), shard(1, 9, base_settings(), 2), shard(2, 9, base_settings(), 2),
                            shard(3, 9, base_settings(), 2), shard(4, 9, base_settings(), 2), shard(5, 9, base_settings(), 2),
                            shard(6, 9, base_settings(), 2), shard(7, 9, base_settings(), 2), shard(8, 9, base_settings(), 2)}),
                     measure(base_settings(), 2));
}

// NaN and the infinities, in an info collector's cells and on a config axis, survive the shards'
// results files and the merge.
TEST(Merge, NonFiniteInfoAndConfigValuesSurviveTheShardsFiles) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Settings s = base_settings();
  s.info_collectors = {{"nan", CollectionScope::run, [&](const CollectionContext&) { return Cell{nan}; }},
                       {"inf", CollectionScope::config, [&](const CollectionContext&) { return Cell{inf}; }},
                       {"minus_inf", CollectionScope::annotation, [&](const CollectionContext&) { return Cell{-inf}; }}};
  const Sweep sweep = Sweep().axis("n", {1, 2}).axis("limit", {Value(inf), Value(-inf), Value(nan)});
  TempDir dir;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < 2; ++i) {
    Settings settings = s;
    settings.shard = Shard{i, 2};
    SimulatedBackend backend;
    const Body body = [&](const Config& c) {
      Annotation a("base");
      backend.launch("base_kernel", 50.0 * static_cast<double>(c.get<std::int64_t>("n")));
    };
    files.push_back(dir.prefix("shard" + std::to_string(i) + ".json"));
    profile_with_backend(sweep, settings, body, backend).write_json(files.back());
  }
  const Results merged = merge_files(files);
  ASSERT_EQ(merged.configs().size(), 6u);
  EXPECT_EQ(merged.configs()[0].at("limit").as_double(), inf);
  EXPECT_TRUE(std::isnan(merged.configs()[2].at("limit").as_double()));
  ASSERT_FALSE(merged.samples().size() == 0);
  for (std::size_t i = 0; i < merged.samples().size(); ++i) {
    const auto& info = merged.samples()[i].info;
    ASSERT_EQ(info.size(), 3u);
    EXPECT_TRUE(std::holds_alternative<double>(info[0]) && std::isnan(std::get<double>(info[0]))) << "sample " << i;
    EXPECT_EQ(info[1], Cell{inf}) << "sample " << i;
    EXPECT_EQ(info[2], Cell{-inf}) << "sample " << i;
  }
}

TEST(Merge, ShardsKeepTheirDeclaredWorkAndGiveTheSingleSessionsRoofline) {
  Settings s = base_settings();
  s.work = DeclaredWork::per_annotation(
      {{"work", [](const Config& c) { return Work{4e3 * c.get<double>("n"), 1e3, {Precision::fp16, true}}; }}});
  const Results whole = measure(s);
  std::vector<Results> shards;
  for (std::size_t i = 0; i < 3; ++i) shards.push_back(shard(i, 3, s));
  const Results merged = merge(shards);
  expect_same_tables(merged, whole);
  std::size_t with_bound = 0;
  for (const auto& row : merged.rows()) {
    EXPECT_EQ(row.work.has_value(), row.annotation == "work");
    with_bound += row.roofline.bound.has_value();
  }
  EXPECT_EQ(with_bound, 7u);  // one duration row per config
  TempDir dir;  // from the shards' files: the work comes from their rows
  std::vector<std::string> files;
  for (std::size_t i = 0; i < 3; ++i) {
    files.push_back(dir.prefix("shard" + std::to_string(i) + ".json"));
    shards[i].write_json(files.back());
  }
  expect_same_tables(merge_files(files), whole);
}

// The measured metrics' rows before the derived ones, as one session orders them: the shards'
// sessions say which metrics the backend measured.
TEST(Merge, DerivedRowsComeAfterTheMeasuredOnesAsInOneSession) {
  Settings s = base_settings();
  s.normalize_against.clear();
  s.derive_metric = [](const MeasuredValues& m, const Config&) {
    return std::vector<DerivedValue>{{"per_call", m.front() / 2, "ns"}};
  };
  const Results whole = measure(s, 4);
  Settings first = s, second = s;
  first.shard = Shard{0, 2};
  second.shard = Shard{1, 2};
  const Results merged = merge({measure(first, 4), measure(second, 4)});
  expect_same_tables(merged, whole);
  EXPECT_EQ(merged.session().metrics, std::vector<std::string>{"test__kernel_duration"});
  EXPECT_EQ(merged.rows().back().metric, "per_call");
}

// A results file keeps no callable: a shard loaded from one merges with shards still in memory.
TEST(Merge, AShardLoadedFromItsFileMergesWithOnesInMemoryThatHaveCallables) {
  Settings s = base_settings();
  s.derive_metric = [](const MeasuredValues& m, const Config&) {
    return std::vector<DerivedValue>{{"per_call", m.front() / 2, "ns"}};
  };
  Settings first = s, second = s;
  first.shard = Shard{0, 2};
  second.shard = Shard{1, 2};
  TempDir dir;
  const std::string file = dir.prefix("shard1.json");
  measure(second, 4).write_json(file);
  expect_same_tables(merge({measure(first, 4), load_results(file)}), measure(s, 4));
}

TEST(Merge, EveryRowKeepsTheGpuAndHostOfItsShard) {
  std::vector<Results> shards;
  for (std::size_t i = 0; i < 3; ++i)
    shards.push_back(with_session(shard(i, 3), [i](SessionInfo& s) {
      s.host = "node" + std::to_string(i);
      s.gpu_uuid = "GPU-" + std::to_string(i);
    }));
  const Results merged = merge(shards);
  const Table t = merged.summary_table();
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin());
  };
  ASSERT_FALSE(t.rows.empty());
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    EXPECT_EQ(std::get<std::string>(t.rows[r][column("Host")]), "node" + std::to_string(merged.rows()[r].config_index % 3));
  EXPECT_EQ(merged.session().host, "node0, node1, node2");

  TempDir dir;  // the file keeps them
  merged.write_json(dir.prefix("merged.json"));
  const Results loaded = load_results(dir.prefix("merged.json"));
  ASSERT_EQ(loaded.shard_sessions().size(), 3u);
  EXPECT_EQ(loaded.session_of(4).host, "node1");
  expect_same_tables(loaded, merged);
}

TEST(Merge, RefusesShardsThatAreNotOneSweeps) {
  const Results s0 = shard(0, 3), s1 = shard(1, 3), s2 = shard(2, 3);
  EXPECT_NE(error_of([&] { merge({s0, s2}); }).find("shard 1/3 of the sweep is missing"), std::string::npos);
  EXPECT_NE(error_of([&] { merge({s0, s1, s1, s2}); }).find("shard 1/3 is given twice"), std::string::npos);
  EXPECT_NE(error_of([&] { merge({s0, s1, shard(2, 4)}); }).find("come from splits into 4 and 3 shards"),
            std::string::npos);
  EXPECT_NE(error_of([&] { merge({s0, s1, measure(base_settings())}); }).find("is not a shard"), std::string::npos);
  EXPECT_NE(error_of([&] { merge({}); }).find("nothing to merge"), std::string::npos);

  Settings more_runs = base_settings();
  more_runs.runs = 5;
  EXPECT_NE(error_of([&] { merge({s0, shard(1, 3, more_runs), s2}); }).find("different settings (Settings::runs: 5 and 4)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { merge({s0, s1, shard(2, 3, base_settings(), 8)}); }).find("measured different sweeps (8 configs"),
            std::string::npos);
  const Results h100 = with_session(s1, [](SessionInfo& s) { s.gpu = "NVIDIA H100"; });
  EXPECT_NE(error_of([&] { merge({s0, h100, s2}); }).find("ran on different GPU models (NVIDIA H100 and simulated GPU"),
            std::string::npos);
  const Results warm = with_session(s2, [](SessionInfo& s) { s.cache_control = CacheControl::none; });
  EXPECT_NE(error_of([&] { merge({s0, s1, warm}); }).find("cache_control none and all"), std::string::npos);
}

// Shard `index` of `count` of a 7-config sweep whose body fails at config `fail_at`: its partial results.
Results failed_shard(std::size_t index, std::size_t count, std::size_t fail_at) {
  Settings failing = base_settings();
  failing.shard = Shard{index, count};
  SimulatedBackend backend;
  const Body body = [&](const Config& c) {
    if (c.index() == fail_at) throw std::runtime_error("out of memory");
    {
      Annotation a("base");
      backend.launch("base_kernel", 10);
    }
    Annotation w("work");
    backend.launch("work_kernel", 20);
  };
  try {
    profile_with_backend(sweep_of(7), failing, body, backend);
  } catch (const SweepError& e) {
    return e.partial_results();
  }
  ADD_FAILURE() << "the sweep did not fail at config " << fail_at + 1;
  return shard(index, count);
}

TEST(Merge, RefusesAShardThatDidNotFinish) {
  const std::string error = error_of([&] { merge({shard(0, 3), failed_shard(1, 3, 4), shard(2, 3)}); });
  EXPECT_NE(error.find("shard 1/3 did not finish: 1 of its 2 configs have no samples (config 5 of 7)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("KSCOPE_SHARD=1/3, or Settings::shard = {1, 3}"), std::string::npos) << error;
}

// Issue 42: the merge named one shard to run again, by KSCOPE_SHARD only; under Slurm each is an
// array task, and one sbatch line runs them all again.
TEST(Merge, NamesEveryShardToRunAgainWithItsSlurmArrayTasks) {
  std::string error = error_of([&] { merge({shard(0, 7), shard(2, 7), shard(6, 7)}); });
  EXPECT_NE(error.find("shards 1/7, 3/7, 4/7, 5/7 of the sweep are missing: run them (KSCOPE_SHARD=1/7 ..., or "
                       "Settings::shard = {1, 7}; in a Slurm job array whose task ids are the shard indexes: "
                       "sbatch --array=1,3-5 <job script>) and merge all 7"),
            std::string::npos)
      << error;
  error = error_of([&] { merge({shard(0, 3), failed_shard(1, 3, 4), failed_shard(2, 3, 5)}); });
  EXPECT_NE(error.find("shard 1/3 did not finish: 1 of its 2 configs have no samples (config 5 of 7); shard 2/3 did "
                       "not finish: 1 of its 2 configs have no samples (config 6 of 7); run them again "
                       "(KSCOPE_SHARD=1/3 ..., or Settings::shard = {1, 3}; in a Slurm job array whose task ids are "
                       "the shard indexes: sbatch --array=1-2 <job script>) with the same output prefix and "
                       "Settings::resume = true, then merge again"),
            std::string::npos)
      << error;
}

TEST(Merge, WarnsOfDifferentDriversAndClocks) {
  Settings s = base_settings();
  s.shard = Shard{1, 2};
  Settings clocked = base_settings();
  clocked.shard = Shard{0, 2};
  std::vector<std::string> warnings;
  merge({with_session(measure(clocked, 7, {{1980, 3201, {}}}), [](SessionInfo& i) { i.driver_version = "580.2"; }),
         with_session(measure(s, 7, {{1980, 3201, {}}}), [](SessionInfo& i) { i.driver_version = "575.1"; })},
        &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("different NVIDIA drivers (580.2, 575.1)"), std::string::npos) << warnings[0];

  warnings.clear();
  merge({measure(clocked, 7, {{1980, 3201, {}}}), measure(s, 7, {{1700, 3201, {}}})}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("observed SM clocks differ by 16% (shard 0/2 1980 MHz, shard 1/2 1700 MHz)"),
            std::string::npos)
      << warnings[0];
  warnings.clear();
  merge({measure(clocked, 7, {{1980, 3201, {}}}), measure(s, 7, {{1960, 3201, {}}})}, &warnings);
  EXPECT_TRUE(warnings.empty());  // 1% apart: within what boost clocks do
}

TEST(Merge, FromTheShardsFilesAndTheCommand) {
  TempDir dir;
  const std::string prefix = dir.prefix("sweep_");
  Settings s = base_settings();
  s.output_prefix = prefix;
  for (std::size_t i = 0; i < 3; ++i) shard(i, 3, s);
  EXPECT_TRUE(fs::exists(prefix + "shard-1-of-3-results.json"));
  EXPECT_TRUE(fs::exists(prefix + "shard-1-of-3-samples.csv"));
  EXPECT_TRUE(fs::exists(prefix + "shard-1-of-3-manifest.json"));
  const Results whole = measure(base_settings());
  expect_same_tables(merge_files({prefix}), whole);
  expect_same_tables(merge_files({prefix + "shard-0-of-3-results.json", prefix + "shard-1-of-3-results.json",
                                  prefix + "shard-2-of-3-results.json"}),
                     whole);

  std::ostringstream out, err;
  ASSERT_EQ(merge_command({dir.prefix("merged_"), prefix}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("merged 3 shards into"), std::string::npos) << out.str();
  expect_same_tables(load_results(dir.prefix("merged_results.json")), whole);
  EXPECT_TRUE(fs::exists(dir.prefix("merged_summary.csv")));

  // A shard killed before its results were written: its stream is there, its results are not.
  fs::remove(prefix + "shard-2-of-3-results.json");
  std::ostringstream out2, err2;
  EXPECT_EQ(merge_command({dir.prefix("merged_"), prefix}, out2, err2), 2);
  EXPECT_NE(err2.str().find("shard 2/3 under '" + prefix + "' has not finished"), std::string::npos) << err2.str();
  // The command serves Python and C++ users alike: the plain names of the results files, no C++ spelling.
  EXPECT_NE(err2.str().find("with the same output prefix and resume=True"), std::string::npos) << err2.str();
  // Two of them: both named, with the one line that runs their array tasks again.
  fs::remove(prefix + "shard-0-of-3-results.json");
  const std::string both = error_of([&] { merge_files({prefix}); });
  EXPECT_NE(both.find("shards 0/3, 2/3 under '" + prefix + "' have not finished: their manifest.json is there but no "
                      "results.json"),
            std::string::npos)
      << both;
  EXPECT_NE(both.find("sbatch --array=0,2 <job script>"), std::string::npos) << both;
  // ... resumed, they finish from their streams, and the merge goes through.
  s.resume = true;
  shard(0, 3, s);
  shard(2, 3, s);
  expect_same_tables(merge_files({prefix}), whole);

  std::ostringstream out3, err3;
  EXPECT_EQ(merge_command({dir.prefix("merged_"), dir.prefix("nothing_")}, out3, err3), 2);
  EXPECT_NE(err3.str().find("nothing to merge under"), std::string::npos) << err3.str();
  std::ostringstream out4, err4;
  EXPECT_EQ(merge_command({dir.prefix("merged_")}, out4, err4), 64);
  EXPECT_EQ(merge_command({"--verbose", "a", "b"}, out4, err4), 64);
}

// Issue 25: Python writes a sweep's shards under <output_prefix><function>-<call>-shard-..., and
// merge found nothing under the output_prefix the sweep was given.
TEST(Merge, ThePrefixGivenToTheSweepFindsItsShards) {
  TempDir dir;
  Settings s = base_settings();
  s.output_prefix = dir.prefix("runs/gemm-0-");  // as Python extends output_prefix="runs/"
  fs::create_directory(dir.prefix("runs"));
  for (std::size_t i = 0; i < 3; ++i) shard(i, 3, s);
  const Results whole = measure(base_settings());
  expect_same_tables(merge_files({dir.prefix("runs/")}), whole);
  expect_same_tables(merge_files({dir.prefix("runs")}), whole);  // a directory's name stands for it

  std::ostringstream out, err;
  fs::create_directory(dir.prefix("merged"));
  ASSERT_EQ(merge_command({dir.prefix("merged"), dir.prefix("runs")}, out, err), 0) << err.str();
  expect_same_tables(load_results(dir.prefix("merged/results.json")), whole);  // inside it, not beside it

  // Issue 25: a directory where a results file is expected aborted the command (std::__ios_failure, 134).
  fs::create_directory(dir.prefix("empty"));
  fs::create_directory(dir.prefix("empty/shard-0-of-1-results.json"));
  std::ostringstream out2, err2;
  EXPECT_EQ(merge_command({dir.prefix("merged2_"), dir.prefix("empty/shard-0-of-1-results.json")}, out2, err2), 2);
  EXPECT_NE(err2.str().find("nothing to merge under"), std::string::npos) << err2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(merge_command({dir.prefix("merged2_"), dir.prefix("empty")}, out3, err3), 2);
  EXPECT_NE(err3.str().find("cannot read '" + dir.prefix("empty/shard-0-of-1-results.json") + "': it is a directory"),
            std::string::npos)
      << err3.str();

  s.output_prefix = dir.prefix("runs/gemm-1-");  // a second sweep there: which one is meant?
  shard(0, 3, s);
  EXPECT_EQ(error_of([&] { merge_files({dir.prefix("runs/")}); }),
            "'" + dir.prefix("runs/") + "' holds the shards of 2 sweeps (under '" + dir.prefix("runs/gemm-0-") + "', '" +
                dir.prefix("runs/gemm-1-") + "'): give the prefix of the one to merge, e.g. kscope merge OUT_PREFIX " +
                dir.prefix("runs/gemm-0-"));
  expect_same_tables(merge_files({dir.prefix("runs/gemm-0-")}), whole);
}
