// Declared work (kscope/work.hpp), the device's roofs and the roofline of a row (kscope/roofline.hpp).
#include "core/model/row_roofline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "core/model/caller_language.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"
#include "kscope/detail/enum_names.hpp"

namespace kscope {
namespace {

// Dense FLOPs per SM per clock cycle (a fused multiply-add is 2 FLOPs), by architecture, from the
// units per SM that NVIDIA's architecture whitepapers give; each row is checked against the peak
// rates those papers and the products' datasheets quote (SMs x boost clock x the row's rate; the
// CPU tests check every one). 0: the kind does not exist on that architecture. Tensor rates are
// those of the data-center and professional parts (and of fp16 accumulation): GeForce cards
// accumulate fp16/bf16 in fp32, and run TF32, at half of them.
struct Architecture {
  std::size_t compute_capability;
  const char* name;
  // fp64, fp64 tensor, fp32, fp32 tensor (TF32), fp16, fp16 tensor, bf16, bf16 tensor, fp8 tensor
  std::array<double, 9> rates;
};

constexpr std::array<Architecture, 8> kArchitectures{{
    // Volta: "NVIDIA Tesla V100 GPU Architecture" (2017): per SM 64 FP32 and 32 FP64 cores, 8 tensor
    // cores of 64 FP16 FMA per clock, FP16 at twice the FP32 rate. V100 SXM2 (80 SMs, 1530 MHz):
    // FP64 7.8, FP32 15.7, FP16 31.4, FP16 tensor 125 TFLOP/s.
    {70, "Volta (GV100)", {64, 0, 128, 0, 256, 1024, 0, 0, 0}},
    // Turing: "NVIDIA Turing GPU Architecture" (2018): 64 FP32 cores, 2 FP64 units and 8 tensor cores
    // of 64 FP16 FMA per clock per SM, FP16 at twice the FP32 rate; no BF16. Tesla T4 (40 SMs,
    // 1590 MHz): FP32 8.1, FP16 tensor 65 TFLOP/s.
    {75, "Turing (TU10x)", {4, 0, 128, 0, 256, 1024, 0, 0, 0}},
    // Ampere GA100: "NVIDIA A100 Tensor Core GPU Architecture" (2020). A100 SXM (108 SMs, 1410 MHz):
    // FP64 9.7, FP64 tensor 19.5, FP32 19.5, TF32 156, FP16 78, BF16 39, FP16/BF16 tensor 312 TFLOP/s.
    {80, "Ampere (GA100)", {64, 128, 128, 1024, 512, 2048, 256, 2048, 0}},
    // Ampere GA10x: "NVIDIA Ampere GA102 GPU Architecture" (2020): 128 FP32 cores per SM, FP64 at
    // 1/64 of FP32, FP16 and BF16 at the FP32 rate, 4 tensor cores per SM. A40 (84 SMs, 1740 MHz):
    // FP32 37.4, TF32 74.8, FP16/BF16 tensor 149.7 TFLOP/s.
    {86, "Ampere (GA10x)", {4, 0, 256, 512, 256, 1024, 256, 1024, 0}},
    // Ada: "NVIDIA Ada GPU Architecture" (2022): as GA10x, with FP8 on the tensor cores. L40S (142
    // SMs, 2520 MHz): FP32 91.6, TF32 183, FP16/BF16 tensor 366 (362 in the datasheet), FP8 733 TFLOP/s.
    {89, "Ada Lovelace (AD10x)", {4, 0, 256, 512, 256, 1024, 256, 1024, 2048}},
    // Hopper: "NVIDIA H100 Tensor Core GPU Architecture" (2022). H100 SXM5 (132 SMs, 1980 MHz): FP64
    // 33.5, FP64 tensor 67, FP32 67, FP16/BF16 133.8 TFLOP/s; its tensor rates are quoted at 1830 MHz:
    // TF32 494.7, FP16/BF16 989.4, FP8 1978.9 TFLOP/s (132 x 1830 MHz x 2048, 4096, 8192).
    {90, "Hopper (GH100)", {128, 256, 256, 2048, 512, 4096, 512, 4096, 8192}},
    // Blackwell GB100: "NVIDIA Blackwell Architecture Technical Brief" (2024) and the HGX B200
    // datasheet. B200 (148 SMs, 1980 MHz): FP64 37.5, FP32 75, BF16 150 TFLOP/s; tensor rates quoted
    // at 1860 MHz: FP64 35.2, TF32 1130, FP16/BF16 2250, FP8 4500 TFLOP/s.
    {100, "Blackwell (GB100)", {128, 128, 256, 4096, 512, 8192, 512, 8192, 16384}},
    // Blackwell GB20x: "NVIDIA RTX Blackwell GPU Architecture" (2025): as Ada per SM, 5th-generation
    // tensor cores. GeForce RTX 5090 (170 SMs, 2407 MHz): FP32 104.8, FP16 tensor (FP16 accumulate)
    // 419, FP8 838 TFLOP/s.
    {120, "Blackwell (GB20x)", {4, 0, 256, 512, 256, 1024, 256, 1024, 2048}},
}};

std::size_t rate_index(FlopKind kind) {
  switch (kind.precision) {
    case Precision::fp64: return kind.tensor_cores ? 1 : 0;
    case Precision::fp32: return kind.tensor_cores ? 3 : 2;
    case Precision::fp16: return kind.tensor_cores ? 5 : 4;
    case Precision::bf16: return kind.tensor_cores ? 7 : 6;
    case Precision::fp8: return 8;  // tensor cores only (Work::validate)
  }
  return 0;
}

const Architecture* architecture(std::size_t compute_capability) {
  const auto found = std::find_if(kArchitectures.begin(), kArchitectures.end(), [&](const Architecture& a) {
    return a.compute_capability == compute_capability;
  });
  return found == kArchitectures.end() ? nullptr : &*found;
}

std::string compute_capability_text(std::size_t cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

}  // namespace

// ---- Declared work ------------------------------------------------------------------------------

std::string to_string(Precision p) { return detail::enum_name(p); }

std::string to_string(FlopKind kind) { return to_string(kind.precision) + (kind.tensor_cores ? " tensor" : ""); }

std::optional<FlopKind> parse_flop_kind(const std::string& text) {
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::fp16, Precision::bf16, Precision::fp8})
    for (bool tensor : {false, true})
      if (to_string(FlopKind{p, tensor}) == text) return FlopKind{p, tensor};
  return std::nullopt;
}

void Work::validate() const {
  using detail::spell;
  const auto amount = [&](const char* field, double value, const char* what) {
    if (std::isfinite(value) && value >= 0) return;
    throw ConfigError(spell(std::string("Work::") + field, std::string("kscope.Work ") + field) + " is " +
                      detail::number_text(value) + ": give the " + what + ", a finite number >= 0");
  };
  amount("bytes", bytes, "bytes the region must move between DRAM and the SMs (reads plus writes)");
  amount("flops", flops, "floating-point operations the region must do (a fused multiply-add counts 2)");
  if (bytes == 0 && flops == 0)
    throw ConfigError("the declared work has neither bytes nor FLOPs: declare at least one, or " +
                      spell("return nullopt from the DeclaredWork function", "return None from the work function") +
                      " for a region without declared work");
  if (kind.precision == Precision::fp8 && !kind.tensor_cores)
    throw ConfigError("fp8 FLOPs run on tensor cores only: declare " +
                      spell("FlopKind{Precision::fp8, true}", "kind='fp8', tensor_cores=True"));
}

DeclaredWork DeclaredWork::per_annotation(std::map<std::string, ForConfig> functions) {
  std::vector<std::string> names;
  for (const auto& [name, f] : functions) {
    if (!f) throw ConfigError("DeclaredWork::per_annotation has an empty function for annotation '" + name + "'");
    names.push_back(name);
  }
  return of(
      [functions = std::move(functions)](const std::string& annotation, const Config& c) -> std::optional<Work> {
        const auto found = functions.find(annotation);
        if (found == functions.end()) return std::nullopt;
        return found->second(c);
      },
      std::move(names));
}

DeclaredWork DeclaredWork::of(Function function, std::vector<std::string> annotations) {
  DeclaredWork w;
  w.function_ = std::move(function);
  w.annotations_ = std::move(annotations);
  return w;
}

std::optional<Work> DeclaredWork::operator()(const std::string& annotation, const Config& config) const {
  if (!function_) return std::nullopt;
  std::optional<Work> work = function_(annotation, config);
  if (work) work->validate();
  return work;
}

// ---- Roofs --------------------------------------------------------------------------------------

double flops_per_sm_per_cycle(std::size_t compute_capability, FlopKind kind) {
  const Architecture* a = architecture(compute_capability);
  if (!a) return NAN;
  if (kind.precision == Precision::fp8 && !kind.tensor_cores) return NAN;
  const double rate = a->rates[rate_index(kind)];
  return rate > 0 ? rate : NAN;
}

const std::vector<FlopKind>& flop_kinds() {
  static const std::vector<FlopKind> kinds{
      {Precision::fp64, false}, {Precision::fp64, true}, {Precision::fp32, false},
      {Precision::fp32, true},  {Precision::fp16, false}, {Precision::fp16, true},
      {Precision::bf16, false}, {Precision::bf16, true},  {Precision::fp8, true}};
  return kinds;
}

std::string architecture_name(std::size_t compute_capability) {
  const Architecture* a = architecture(compute_capability);
  return a ? a->name : "";
}

double Roofs::flops_per_s(FlopKind kind) const {
  if (sm_count == 0) return NAN;
  return static_cast<double>(sm_count) * sm_clock_mhz * 1e6 * flops_per_sm_per_cycle(compute_capability, kind);
}

Roofs device_roofs(std::size_t sm_count, std::size_t compute_capability, std::size_t memory_bus_width_bits,
                   double sm_clock_mhz, double memory_clock_mhz) {
  Roofs r;
  r.sm_count = sm_count;
  r.compute_capability = compute_capability;
  r.sm_clock_mhz = sm_clock_mhz > 0 ? sm_clock_mhz : NAN;
  r.memory_clock_mhz = memory_clock_mhz > 0 ? memory_clock_mhz : NAN;
  // Double data rate: NVIDIA reports the memory clock such that every DRAM kind (HBM, GDDR6, GDDR6X's
  // PAM4, GDDR7) moves two bus widths per cycle of it (the H200: 2 x 3201 MHz x 6144 bits = 4.92 TB/s).
  if (memory_bus_width_bits > 0)
    r.dram_bytes_per_s = 2.0 * r.memory_clock_mhz * 1e6 * static_cast<double>(memory_bus_width_bits) / 8.0;
  return r;
}

Roofs session_roofs(const SessionInfo& session, double sm_clock_mhz, double memory_clock_mhz) {
  return device_roofs(session.sm_count, session.compute_capability, session.memory_bus_width_bits,
                      std::isnan(sm_clock_mhz) ? session.rated_sm_clock_mhz : sm_clock_mhz,
                      std::isnan(memory_clock_mhz) ? session.rated_memory_clock_mhz : memory_clock_mhz);
}

// ---- Bound --------------------------------------------------------------------------------------

std::string to_string(Bound b) { return detail::enum_name(b); }

std::optional<Bound> classify_bound(double dram_pct, double compute_pct, const BoundThresholds& thresholds) {
  if (std::isnan(dram_pct) || std::isnan(compute_pct)) return std::nullopt;
  const bool memory = dram_pct >= thresholds.memory_pct, compute = compute_pct >= thresholds.compute_pct;
  if (memory && compute) return compute_pct >= dram_pct ? Bound::compute : Bound::memory;
  if (memory) return Bound::memory;
  if (compute) return Bound::compute;
  return Bound::latency;
}

std::string bound_rule(const BoundThresholds& t) {
  return "memory when the declared bytes over the duration reach " + detail::number_text(t.memory_pct) +
         "% of the DRAM roof, compute when the declared FLOPs over the duration reach " + detail::number_text(t.compute_pct) +
         "% of the roof of their kind (the larger percentage decides when both do), latency when neither does: "
         "neither unit is busy (too little parallelism, dependent accesses, launch-sized work, or traffic the "
         "declared bytes do not count). Roofs at the clocks read around each run.";
}

namespace detail {

void check_bound_thresholds(const BoundThresholds& t) {
  for (const auto& [field, pct] : {std::pair{"bound_thresholds.memory_pct", t.memory_pct},
                                   std::pair{"bound_thresholds.compute_pct", t.compute_pct}})
    if (!(pct > 0 && pct <= 100))
      throw ConfigError(option(field) + " is " + detail::number_text(pct) +
                        ": give a percentage of the roof above 0 and at most 100 (the default is 60)");
}

double seconds_per(const std::string& unit) {
  static const std::map<std::string, double> units{
      {"ns", 1e-9},      {"nsecond", 1e-9}, {"nanosecond", 1e-9}, {"us", 1e-6},       {"usecond", 1e-6},
      {"\u00b5s", 1e-6}, {"\u03bcs", 1e-6}, {"microsecond", 1e-6}, {"ms", 1e-3},      {"msecond", 1e-3},
      {"millisecond", 1e-3}, {"s", 1},      {"second", 1},         {"seconds", 1}};
  const auto found = units.find(unit);
  return found == units.end() ? NAN : found->second;
}

std::string missing_compute_roof(const SessionInfo& session, FlopKind kind) {
  if (session.sm_count == 0 || session.compute_capability == 0)
    return "the device's SM count and compute capability are unknown";
  const std::string name = architecture_name(session.compute_capability);
  if (name.empty())
    return "compute capability " + compute_capability_text(session.compute_capability) +
           " is not in kscope's table of FLOP rates (Volta to Blackwell: docs/roofline.md \"Why is it slow, without counters\")";
  if (std::isnan(flops_per_sm_per_cycle(session.compute_capability, kind)))
    return name + " has no " + to_string(kind) + " arithmetic";
  return {};
}

}  // namespace detail
}  // namespace kscope
