#pragma once
// Declared work: what a region must do at a config, as its author knows it. The bytes it must move
// between DRAM and the SMs and the floating-point operations it must do, with their kind; together
// with the region's measured duration and the device's roofs (kscope/roofline.hpp) they say how
// close the kernel comes to the memory or the compute roof, without hardware counters.
//
//   s.work = [](const kscope::Config& c) {             // every annotation
//     const double n = static_cast<double>(c.get<int64_t>("n"));
//     return kscope::Work{.bytes = 3 * 4 * n, .flops = 2 * n, .kind = {kscope::Precision::fp32}};
//   };
//   s.work = kscope::DeclaredWork::per_annotation({{"gemm", gemm_work}, {"copy", copy_work}});
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kscope/config.hpp"

namespace kscope {

enum class Precision { fp64, fp32, fp16, bf16, fp8 };
std::string to_string(Precision p);  // "fp64", "fp32", "fp16", "bf16", "fp8"

// The arithmetic the FLOPs are done in. fp32 on tensor cores is TF32; fp8 exists on tensor cores only.
struct FlopKind {
  Precision precision = Precision::fp32;  // fp64, fp32, fp16, bf16 or fp8
  bool tensor_cores = false;  // on the tensor cores (fp32 there is TF32)
  friend bool operator==(const FlopKind&, const FlopKind&) = default;  // the same precision and units
};
std::string to_string(FlopKind kind);  // "fp32", "fp16 tensor", ...
// "fp16 tensor" -> {fp16, true}; nullopt for any other text.
std::optional<FlopKind> parse_flop_kind(const std::string& text);

// What a region must do, declared by its author (Settings::work): the bytes it must move and the
// FLOPs it must do, for the roofline without counters (docs/roofline.md).
struct Work {
  // Bytes the region must move between DRAM and the SMs, reads plus writes, each byte once: what
  // it costs with a perfect cache (a copy of n floats: 8n).
  double bytes = 0;
  // Floating-point operations it must do; a fused multiply-add counts 2 (an n x n x n GEMM: 2n^3).
  double flops = 0;
  FlopKind kind;  // the FLOPs' kind

  // Throws ConfigError naming the problem: a negative, NaN or infinite amount, no work at all, fp8
  // off the tensor cores.
  void validate() const;
  friend bool operator==(const Work&, const Work&) = default;  // the same amounts and kind
};

// Settings::work: the declared work of each annotation at each config.
class DeclaredWork {
 public:
  using ForConfig = std::function<Work(const Config&)>;  // one annotation's work at a config
  // nullopt: the annotation has no declared work at this config.
  using Function = std::function<std::optional<Work>(const std::string& annotation, const Config& config)>;

  DeclaredWork() = default;
  // One function for every annotation.
  template <typename F>
    requires(std::is_invocable_r_v<Work, const F&, const Config&> && !std::is_same_v<std::decay_t<F>, DeclaredWork>)
  DeclaredWork(F every_annotation)  // NOLINT(google-explicit-constructor): s.work = [](const Config&) {...};
      : function_([f = std::move(every_annotation)](const std::string&, const Config& c) -> std::optional<Work> {
          return f(c);
        }) {}
  // One function per annotation named; the others have no declared work.
  static DeclaredWork per_annotation(std::map<std::string, ForConfig> functions);
  // Any rule; `annotations` names those it declares work for (empty: it may declare for any), so
  // that a name no region has is reported.
  static DeclaredWork of(Function function, std::vector<std::string> annotations = {});

  explicit operator bool() const { return static_cast<bool>(function_); }  // some work is declared
  // The annotation's work at the config, validated; nullopt when none is declared.
  std::optional<Work> operator()(const std::string& annotation, const Config& config) const;
  // The annotations it names; empty when it may declare work for any.
  const std::vector<std::string>& annotations() const { return annotations_; }

 private:
  Function function_;
  std::vector<std::string> annotations_;
};

}  // namespace kscope
