// Why is it slow, without counters: the roofs of every architecture in kscope's table against the
// rates NVIDIA publishes, the DRAM roof from clock and bus width, the Bound rule, declared work and
// its errors, and the roofline columns of a sweep on the simulated backend posing as each device.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/roofline.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
using kscope::testing::SimulatedDevice;
using kscope_test::error_of;

namespace {

constexpr FlopKind fp64{Precision::fp64, false}, fp64_tensor{Precision::fp64, true};
constexpr FlopKind fp32{Precision::fp32, false}, tf32{Precision::fp32, true};
constexpr FlopKind fp16{Precision::fp16, false}, fp16_tensor{Precision::fp16, true};
constexpr FlopKind bf16{Precision::bf16, false}, bf16_tensor{Precision::bf16, true};
constexpr FlopKind fp8_tensor{Precision::fp8, true};

// A product of each architecture with the peak rates its vendor publishes, at the clock it quotes them.
struct Published {
  const char* product;
  std::size_t compute_capability;
  std::size_t sm_count;
  double clock_mhz;
  FlopKind kind;
  double tflops;
};

const Published kPublished[] = {
    {"V100 SXM2", 70, 80, 1530, fp64, 7.8},      {"V100 SXM2", 70, 80, 1530, fp32, 15.7},
    {"V100 SXM2", 70, 80, 1530, fp16, 31.4},     {"V100 SXM2", 70, 80, 1530, fp16_tensor, 125},
    {"Tesla T4", 75, 40, 1590, fp32, 8.1},       {"Tesla T4", 75, 40, 1590, fp16_tensor, 65},
    {"A100 SXM", 80, 108, 1410, fp64, 9.7},      {"A100 SXM", 80, 108, 1410, fp64_tensor, 19.5},
    {"A100 SXM", 80, 108, 1410, fp32, 19.5},     {"A100 SXM", 80, 108, 1410, tf32, 156},
    {"A100 SXM", 80, 108, 1410, fp16, 78},       {"A100 SXM", 80, 108, 1410, bf16, 39},
    {"A100 SXM", 80, 108, 1410, fp16_tensor, 312}, {"A100 SXM", 80, 108, 1410, bf16_tensor, 312},
    {"A40", 86, 84, 1740, fp32, 37.4},           {"A40", 86, 84, 1740, tf32, 74.8},
    {"A40", 86, 84, 1740, fp16_tensor, 149.7},   {"A40", 86, 84, 1740, bf16_tensor, 149.7},
    {"L40S", 89, 142, 2520, fp32, 91.6},         {"L40S", 89, 142, 2520, tf32, 183},
    {"L40S", 89, 142, 2520, fp16_tensor, 366},   {"L40S", 89, 142, 2520, fp8_tensor, 733},
    {"H100 SXM5", 90, 132, 1980, fp64, 33.5},    {"H100 SXM5", 90, 132, 1980, fp64_tensor, 67},
    {"H100 SXM5", 90, 132, 1980, fp32, 67},      {"H100 SXM5", 90, 132, 1980, fp16, 133.8},
    {"H100 SXM5", 90, 132, 1980, bf16, 133.8},   {"H100 SXM5", 90, 132, 1830, tf32, 494.7},
    {"H100 SXM5", 90, 132, 1830, fp16_tensor, 989.4}, {"H100 SXM5", 90, 132, 1830, bf16_tensor, 989.4},
    {"H100 SXM5", 90, 132, 1830, fp8_tensor, 1978.9},
    {"B200", 100, 148, 1980, fp64, 37.5},        {"B200", 100, 148, 1980, fp32, 75},
    {"B200", 100, 148, 1980, bf16, 150},         {"B200", 100, 148, 1860, fp64_tensor, 35.2},
    {"B200", 100, 148, 1860, tf32, 1130},        {"B200", 100, 148, 1860, fp16_tensor, 2250},
    {"B200", 100, 148, 1860, fp8_tensor, 4500},
    {"RTX 5090", 120, 170, 2407, fp32, 104.8},   {"RTX 5090", 120, 170, 2407, fp16_tensor, 419},
    {"RTX 5090", 120, 170, 2407, fp8_tensor, 838},
};

double tflops(const Published& p) {
  return device_roofs(p.sm_count, p.compute_capability, 0, p.clock_mhz, NAN).flops_per_s(p.kind) / 1e12;
}

// A sweep of one config and one annotation whose runs take these durations (ns), on `device`, with
// these clock readings around the runs (none: NaN, the rated clocks stand in).
Settings quiet() {
  Settings s;
  s.verbosity = Verbosity::quiet;
  return s;
}

Results profile_on(const SimulatedDevice& device, const Work& work, std::vector<double> durations_ns,
                   std::vector<ClockReading> clocks = {}, Settings s = quiet()) {
  SimulatedBackend backend;
  backend.set_device(device);
  if (!clocks.empty()) backend.set_clock_readings(std::move(clocks));
  s.runs = durations_ns.size();
  s.warmup_runs = 0;
  s.work = [work](const Config&) { return work; };
  std::size_t call = 0;
  return profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("kernel");
    backend.launch("kernel", durations_ns[call++]);
  }, backend);
}

SimulatedDevice device(std::size_t cc, std::size_t sms, double sm_mhz, double memory_mhz, std::size_t bus_bits) {
  SimulatedDevice d;
  d.compute_capability = cc;
  d.sm_count = sms;
  d.rated_sm_clock_mhz = sm_mhz;
  d.rated_memory_clock_mhz = memory_mhz;
  d.memory_bus_width_bits = bus_bits;
  return d;
}

}  // namespace

TEST(Roofs, EveryArchitectureInTheTableGivesTheRatesItsVendorPublishes) {
  std::set<std::size_t> architectures;
  for (const Published& p : kPublished) {
    architectures.insert(p.compute_capability);
    EXPECT_NEAR(tflops(p), p.tflops, p.tflops * 0.01) << p.product << " " << to_string(p.kind);
  }
  // Every architecture of the table is checked here.
  for (std::size_t cc = 0; cc < 200; ++cc)
    EXPECT_EQ(architectures.count(cc) == 1, !architecture_name(cc).empty()) << "compute capability " << cc;
  EXPECT_EQ(architecture_name(90), "Hopper (GH100)");
  EXPECT_EQ(architecture_name(120), "Blackwell (GB20x)");
}

TEST(Roofs, KindsAnArchitectureLacksAndArchitecturesTheTableLacksHaveNoRate) {
  EXPECT_TRUE(std::isnan(flops_per_sm_per_cycle(70, bf16_tensor)));  // Volta: no BF16
  EXPECT_TRUE(std::isnan(flops_per_sm_per_cycle(75, tf32)));         // Turing: no TF32
  EXPECT_TRUE(std::isnan(flops_per_sm_per_cycle(86, fp64_tensor)));  // GA10x: no FP64 tensor cores
  EXPECT_TRUE(std::isnan(flops_per_sm_per_cycle(80, fp8_tensor)));   // A100: no FP8
  EXPECT_TRUE(std::isnan(flops_per_sm_per_cycle(90, FlopKind{Precision::fp8, false})));
  for (std::size_t cc : {60u, 72u, 87u, 103u, 110u, 121u}) {
    EXPECT_TRUE(architecture_name(cc).empty()) << cc;
    EXPECT_TRUE(std::isnan(flops_per_sm_per_cycle(cc, fp32))) << cc;
  }
  EXPECT_EQ(flops_per_sm_per_cycle(90, fp16_tensor), 4096);
  EXPECT_EQ(flops_per_sm_per_cycle(80, fp16_tensor), 2048);
  EXPECT_EQ(flop_kinds().size(), 9u);
  // No SM count: no compute roof; no bus width: no DRAM roof.
  EXPECT_TRUE(std::isnan(device_roofs(0, 90, 6144, 1980, 3201).flops_per_s(fp32)));
  EXPECT_TRUE(std::isnan(device_roofs(132, 90, 0, 1980, 3201).dram_bytes_per_s));
}

TEST(Roofs, DramBandwidthIsTwiceTheMemoryClockTimesTheBusWidth) {
  // (product, memory clock MHz as CUDA and NVML report it, bus bits, published GB/s)
  struct Memory {
    const char* product;
    double clock_mhz;
    std::size_t bus_bits;
    double gbps;
  };
  for (const Memory& m : {Memory{"H200 (HBM3e)", 3201, 6144, 4800}, Memory{"H100 SXM5 (HBM3)", 2619, 5120, 3350},
                          Memory{"A100 40GB (HBM2)", 1215, 5120, 1555}, Memory{"V100 (HBM2)", 877, 4096, 900},
                          Memory{"RTX 3090 (GDDR6X)", 9751, 384, 936}, Memory{"Tesla T4 (GDDR6)", 5001, 256, 320},
                          Memory{"RTX 5090 (GDDR7)", 14001, 512, 1792}}) {
    const double gbps = device_roofs(1, 90, m.bus_bits, 1000, m.clock_mhz).dram_bytes_per_s / 1e9;
    // The H200's datasheet rounds 4.92 TB/s down to 4.8.
    EXPECT_NEAR(gbps, m.gbps, m.gbps * 0.025) << m.product;
  }
  EXPECT_DOUBLE_EQ(device_roofs(132, 90, 6144, 1980, 3201).dram_bytes_per_s, 2 * 3201e6 * 6144 / 8);
}

TEST(Bound, TheLargerPercentageAboveItsThresholdDecidesElseLatency) {
  const BoundThresholds t;
  EXPECT_EQ(classify_bound(85, 3, t), Bound::memory);
  EXPECT_EQ(classify_bound(10, 90, t), Bound::compute);
  EXPECT_EQ(classify_bound(70, 80, t), Bound::compute);
  EXPECT_EQ(classify_bound(80, 70, t), Bound::memory);
  EXPECT_EQ(classify_bound(70, 70, t), Bound::compute);  // a tie counts as compute, as speed_of_light's
  EXPECT_EQ(classify_bound(59.9, 59.9, t), Bound::latency);
  EXPECT_EQ(classify_bound(60, 0, t), Bound::memory);
  EXPECT_FALSE(classify_bound(NAN, 90, t));
  const BoundThresholds strict{80, 50};
  EXPECT_EQ(classify_bound(70, 55, strict), Bound::compute);  // 70% of DRAM is below its 80%
  EXPECT_EQ(classify_bound(70, 40, strict), Bound::latency);
  EXPECT_NE(bound_rule(strict).find("reach 80% of the DRAM roof"), std::string::npos) << bound_rule(strict);
  EXPECT_NE(bound_rule(strict).find("reach 50% of the roof of their kind"), std::string::npos);
}

TEST(Work, BadDeclarationsAreRefusedNamingTheField) {
  const auto refused = [](Work w) { return error_of([&] { w.validate(); }); };
  EXPECT_EQ(refused({-1, 0, {}}), "Work::bytes is -1: give the bytes the region must move between DRAM and the SMs "
                                  "(reads plus writes), a finite number >= 0");
  EXPECT_NE(refused({1, NAN, {}}).find("Work::flops is nan"), std::string::npos);
  EXPECT_NE(refused({INFINITY, 0, {}}).find("Work::bytes is inf"), std::string::npos);
  EXPECT_NE(refused({0, 0, {}}).find("neither bytes nor FLOPs: declare at least one, or return nullopt"),
            std::string::npos);
  EXPECT_EQ(refused({1, 1, {Precision::fp8, false}}),
            "fp8 FLOPs run on tensor cores only: declare FlopKind{Precision::fp8, true}");
  Work{0, 1, {Precision::fp8, true}}.validate();
  EXPECT_EQ(to_string(FlopKind{Precision::bf16, true}), "bf16 tensor");
  EXPECT_EQ(parse_flop_kind("fp32 tensor"), (std::optional<FlopKind>{tf32}));
  EXPECT_FALSE(parse_flop_kind("tf32"));
}

TEST(Work, DeclaredForEveryAnnotationOrPerAnnotationAndValidatedWhenAsked) {
  const Config c = Sweep().axis("n", {1024}).configs().front();
  DeclaredWork none;
  EXPECT_FALSE(none);
  EXPECT_FALSE(none("a", c));
  DeclaredWork every = [](const Config& config) { return Work{8.0 * config.get<std::int64_t>("n"), 0, {}}; };
  Settings s;  // docs/roofline.md's line
  s.work = [](const kscope::Config& c) { return kscope::Work{.bytes = 8.0 * c.get<int64_t>("n")}; };
  EXPECT_EQ(s.work("copy", c), (std::optional<Work>{Work{8192, 0, {Precision::fp32, false}}}));
  EXPECT_EQ(every("anything", c)->bytes, 8192);
  EXPECT_TRUE(every.annotations().empty());
  const DeclaredWork per = DeclaredWork::per_annotation(
      {{"copy", [](const Config&) { return Work{1, 0, {}}; }}, {"bad", [](const Config&) { return Work{-2, 0, {}}; }}});
  EXPECT_EQ(per.annotations(), (std::vector<std::string>{"bad", "copy"}));
  EXPECT_TRUE(per("copy", c));
  EXPECT_FALSE(per("other", c));
  EXPECT_NE(error_of([&] { per("bad", c); }).find("Work::bytes is -2"), std::string::npos);
}

TEST(RooflineColumns, PerRunPercentagesAtEachRunsClocksWithTheirMeanAndInterval) {
  // An H200: 132 SMs, compute capability 9.0, 6144-bit bus. 1 GB read and written, 1 GFLOP of fp32.
  const Work work{2e9, 1e9, {Precision::fp32, false}};
  // Two readings around each run (before it, and at its batch's collection); a run's clocks are
  // their mean: 1980, 1740 and 1500 MHz.
  const Results r = profile_on(SimulatedDevice{}, work, {500e3, 500e3, 1000e3},
                               {{1980, 3201, {}}, {1980, 3201, {}}, {1980, 3201, {}}, {1500, 3201, {}},
                                {1500, 3201, {}}, {1500, 3201, {}}});
  ASSERT_EQ(r.rows().size(), 1u);
  const SummaryRow& row = r.rows()[0];
  ASSERT_TRUE(row.work);
  const double dram = 2 * 3201e6 * 6144 / 8;
  // Run 1: 4 TB/s; run 2: 4 TB/s; run 3: 2 TB/s (all at 3201 MHz).
  const std::vector<double> dram_pct{100 * 4e12 / dram, 100 * 4e12 / dram, 100 * 2e12 / dram};
  EXPECT_NEAR(row.roofline.achieved_gbps, (4000 + 4000 + 2000) / 3.0, 1e-9);
  EXPECT_NEAR(row.roofline.dram_roof_gbps, dram / 1e9, 1e-9);
  EXPECT_NEAR(row.roofline.dram_pct.mean, (dram_pct[0] + dram_pct[1] + dram_pct[2]) / 3, 1e-9);
  EXPECT_LT(row.roofline.dram_pct.ci95_lower, row.roofline.dram_pct.mean);
  EXPECT_GT(row.roofline.dram_pct.ci95_upper, row.roofline.dram_pct.mean);
  const double clocks[] = {1980, (1980 + 1500) / 2.0, 1500};
  const double flops[] = {2e12, 2e12, 1e12};
  double pct = 0, roof = 0;
  for (int i = 0; i < 3; ++i) {
    pct += 100 * flops[i] / (132 * clocks[i] * 1e6 * 256) / 3;
    roof += 132 * clocks[i] * 1e6 * 256 / 1e12 / 3;
  }
  EXPECT_NEAR(row.roofline.compute_pct.mean, pct, 1e-9);
  EXPECT_NEAR(row.roofline.compute_roof_tflops, roof, 1e-9);
  EXPECT_NEAR(row.roofline.achieved_tflops, 5.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(row.roofline.arithmetic_intensity, 0.5);
  EXPECT_EQ(row.roofline.bound, Bound::memory);  // ~68% of DRAM, ~4% of fp32

  const Table t = r.summary_table();
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("WorkKind")]), "fp32");
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("Bound")]), "memory");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][t.column("WorkBytes")]), 2e9);
}

TEST(RooflineColumns, WithoutClockReadingsTheRatedClocksStandIn) {
  const Results r = profile_on(SimulatedDevice{}, Work{0, 1e12, {Precision::fp16, true}}, {1.2e6, 1.2e6});
  const SummaryRow& row = r.rows()[0];
  const double roof = 132 * 1980e6 * 4096;
  EXPECT_NEAR(row.roofline.compute_roof_tflops, roof / 1e12, 1e-9);
  EXPECT_NEAR(row.roofline.compute_pct.mean, 100 * (1e12 / 1.2e-3) / roof, 1e-9);
  EXPECT_DOUBLE_EQ(row.roofline.compute_pct.ci95_lower, row.roofline.compute_pct.mean);  // identical runs
  EXPECT_EQ(row.roofline.dram_pct.mean, 0);  // no declared bytes: 0% of the DRAM roof
  EXPECT_EQ(row.roofline.arithmetic_intensity, INFINITY);
  EXPECT_EQ(row.roofline.bound, Bound::compute);  // 77.8% of the fp16 tensor roof
}

TEST(RooflineColumns, EachArchitectureOfTheTableOnAFakeDevice) {
  // One kernel at 50% of its device's fp32 roof and 10% of its DRAM roof, on a device of each
  // architecture of the table (the SM count and clocks of the product above).
  std::map<std::size_t, const Published*> product;
  for (const Published& p : kPublished)
    if (p.kind == fp32) product.emplace(p.compute_capability, &p);
  ASSERT_EQ(product.size(), 8u);
  for (const auto& [cc, p] : product) {
    const SimulatedDevice d = device(cc, p->sm_count, p->clock_mhz, 1000, 4096);
    const double fp32_roof = static_cast<double>(p->sm_count) * p->clock_mhz * 1e6 * flops_per_sm_per_cycle(cc, fp32);
    const double seconds = 1e-3, dram = 2 * 1000e6 * 4096 / 8;
    const Work work{0.1 * dram * seconds, 0.5 * fp32_roof * seconds, {Precision::fp32, false}};
    const SummaryRow row = profile_on(d, work, {1e6, 1e6}).rows()[0];
    EXPECT_NEAR(row.roofline.compute_pct.mean, 50, 1e-9) << architecture_name(cc);
    EXPECT_NEAR(row.roofline.dram_pct.mean, 10, 1e-9) << architecture_name(cc);
    EXPECT_NEAR(row.roofline.compute_roof_tflops, p->tflops, p->tflops * 0.01) << architecture_name(cc);
    EXPECT_EQ(row.roofline.bound, Bound::latency) << architecture_name(cc);
  }
}

TEST(RooflineColumns, AKindTheDeviceLacksLeavesTheComputeRoofEmptyAndSaysWhy) {
  Settings s;
  s.progress_observer = [](const SweepProgress&) {};
  ::testing::internal::CaptureStderr();
  const Results r = profile_on(device(80, 108, 1410, 1215, 5120), Work{1e6, 1e9, {Precision::fp8, true}}, {1e5}, {}, s);
  const std::string log = ::testing::internal::GetCapturedStderr();
  const SummaryRow& row = r.rows()[0];
  EXPECT_TRUE(std::isnan(row.roofline.compute_pct.mean));
  EXPECT_FALSE(row.roofline.bound);
  EXPECT_FALSE(std::isnan(row.roofline.dram_pct.mean));
  EXPECT_NE(log.find("annotation 'kernel' declares fp8 tensor FLOPs, but Ampere (GA100) has no fp8 tensor arithmetic: "
                     "its compute roof, ComputeRoofPct and Bound stay empty"),
            std::string::npos)
      << log;
  // An architecture the table lacks: the DRAM roof still comes from the device.
  ::testing::internal::CaptureStderr();
  const Results orin = profile_on(device(87, 16, 1300, 3200, 256), Work{1e6, 1e9, {}}, {1e5}, {}, s);
  const std::string orin_log = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(std::isnan(orin.rows()[0].roofline.dram_pct.mean));
  EXPECT_NE(orin_log.find("compute capability 8.7 is not in kscope's table of FLOP rates"), std::string::npos)
      << orin_log;
}

TEST(RooflineColumns, OnlyTheDurationRowGetsTheRooflineButEveryRowOfTheAnnotationItsWork) {
  SimulatedBackend backend;
  Settings s;
  s.runs = 3;
  s.verbosity = Verbosity::quiet;
  s.derive_metric = [](const MeasuredValues& m, const Config&) {
    return std::vector<DerivedValue>{{"latency_us", m.front() / 1e3, "us"}, {"bandwidth", 8e6 / m.front(), "GB/s"}};
  };
  s.work = DeclaredWork::per_annotation({{"copy", [](const Config&) { return Work{8e6, 0, {}}; }}});
  const Results r = profile_with_backend(Sweep(), s, [&](const Config&) {
    {
      Annotation a("copy");
      backend.launch("copy", 2000);
    }
    Annotation b("other");
    backend.launch("other", 1000);
  }, backend);
  int with_point = 0;
  for (const SummaryRow& row : r.rows()) {
    EXPECT_EQ(row.work.has_value(), row.annotation == "copy") << row.annotation << " " << row.metric;
    if (!std::isnan(row.roofline.achieved_gbps)) {
      ++with_point;
      EXPECT_EQ(row.metric, "test__kernel_duration");  // not latency_us, a later metric in a unit of time
      EXPECT_NEAR(row.roofline.achieved_gbps, 4000, 1e-9);
    }
  }
  EXPECT_EQ(with_point, 1);
}

TEST(RooflineColumns, AFailingWorkFunctionFailsItsConfigKeepingWhatCameBefore) {
  SimulatedBackend backend;
  Settings s;
  s.runs = 2;
  s.verbosity = Verbosity::quiet;
  s.work = [](const Config& c) {
    if (c.get<std::int64_t>("n") == 2) throw ConfigError("no model for n=2");
    return Work{1, 1, {}};
  };
  try {
    profile_with_backend(Sweep().axis("n", {1, 2}), s, [&](const Config&) {
      Annotation a("k");
      backend.launch("k", 10);
    }, backend);
    ADD_FAILURE() << "no SweepError";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("config 2/2 (n=2) failed in run 1, in Settings::work: no model for n=2"),
              std::string::npos)
        << e.what();
    ASSERT_EQ(e.partial_results().rows().size(), 1u);
    EXPECT_TRUE(e.partial_results().rows()[0].work);
  }
}

TEST(RooflineColumns, NamesOfAnnotationsNoRunRecordedAreReported) {
  SimulatedBackend backend;
  Settings s;
  s.runs = 1;
  s.progress_observer = [](const SweepProgress&) {};  // only the warning on stderr
  s.work = DeclaredWork::per_annotation({{"gemmm", [](const Config&) { return Work{1, 1, {}}; }}});
  ::testing::internal::CaptureStderr();
  profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("gemm");
    backend.launch("gemm", 10);
  }, backend);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("Settings::work names 'gemmm', which no run recorded; recorded annotations: 'gemm'"),
            std::string::npos)
      << log;
}

TEST(RooflineColumns, ThresholdsAreSettingsAndValidated) {
  Settings s;
  s.bound_thresholds = {0, 60};
  EXPECT_EQ(error_of([&] { s.validate(); }),
            "Settings::bound_thresholds.memory_pct is 0: give a percentage of the roof above 0 and at most 100 (the "
            "default is 60)");
  s.bound_thresholds = {60, NAN};
  EXPECT_NE(error_of([&] { s.validate(); }).find("Settings::bound_thresholds.compute_pct is nan"), std::string::npos);
  // 68% of DRAM: memory-bound at 60%, latency-bound once memory needs 70%.
  Settings strict = quiet();
  strict.bound_thresholds = {70, 60};
  const Work work{2e9, 1e9, {}};
  EXPECT_EQ(profile_on(SimulatedDevice{}, work, {600e3}).rows()[0].roofline.bound, Bound::memory);
  EXPECT_EQ(profile_on(SimulatedDevice{}, work, {600e3}, {}, strict).rows()[0].roofline.bound, Bound::latency);
}

TEST(RooflineColumns, TheReadableViewShowsTheRoofsAndTheVerdict) {
  std::ostringstream out;
  out << profile_on(SimulatedDevice{}, Work{2e9, 1e9, {}}, {600e3});
  EXPECT_NE(out.str().find("roofs at rated clocks: DRAM 4917 GB/s, fp32 66.9 TFLOP/s"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("DRAM%"), std::string::npos);
  EXPECT_NE(out.str().find("memory"), std::string::npos);
}
