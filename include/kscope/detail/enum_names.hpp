#pragma once
// The names of kscope's enumerations, each enumeration's listed once (src/core/model/enum_names.cpp):
// the settings', the collection scopes, and those of the derived results (a comparison's verdicts,
// gate and metric directions; an evaluation's verdicts and sides; a race's outcomes). to_string,
// the results and evaluation files, the manifest, the kscope command line and the Python module's
// enumerations (whose checks, messages and DataFrame cells take their names from them) read these.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kscope/columns.hpp"
#include "kscope/errors.hpp"
#include "kscope/info_collector.hpp"
#include "kscope/settings.hpp"

namespace kscope {
enum class Verdict;
enum class Gate;
enum class MetricDirection;
enum class EvaluationVerdict;
enum class Side;
enum class RaceOutcome;
enum class Precision;
enum class Bound;
enum class ValueType;
enum class MetricType;
enum class Bottleneck;
}  // namespace kscope

namespace kscope::detail {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

std::span<const EnumName<ReplayMode>> enum_names(ReplayMode);
std::span<const EnumName<CacheControl>> enum_names(CacheControl);
std::span<const EnumName<ClockControl>> enum_names(ClockControl);
std::span<const EnumName<ThrottledRuns>> enum_names(ThrottledRuns);
std::span<const EnumName<Verbosity>> enum_names(Verbosity);
std::span<const EnumName<ThermalMode>> enum_names(ThermalMode);
std::span<const EnumName<InfoCollectorErrors>> enum_names(InfoCollectorErrors);
std::span<const EnumName<Sampling>> enum_names(Sampling);
std::span<const EnumName<CollectionScope>> enum_names(CollectionScope);
std::span<const EnumName<ColumnType>> enum_names(ColumnType);
std::span<const EnumName<Verdict>> enum_names(Verdict);
std::span<const EnumName<Gate>> enum_names(Gate);
// "lower", "higher", "undefined": as a caller names a direction (kscope compare --direction,
// Python's directions=); to_string(MetricDirection) says "lower is better".
std::span<const EnumName<MetricDirection>> enum_names(MetricDirection);
std::span<const EnumName<EvaluationVerdict>> enum_names(EvaluationVerdict);
std::span<const EnumName<Side>> enum_names(Side);
std::span<const EnumName<RaceOutcome>> enum_names(RaceOutcome);
std::span<const EnumName<Precision>> enum_names(Precision);
std::span<const EnumName<Bound>> enum_names(Bound);
std::span<const EnumName<ValueType>> enum_names(ValueType);
std::span<const EnumName<MetricType>> enum_names(MetricType);
std::span<const EnumName<Bottleneck>> enum_names(Bottleneck);
// kscope's own, declared beside their enumerations, found by their namespace: UTestMethod, ResultKind,
// SettingsRole (src/core); the doctor's CudaInitState and CheckStatus (src/doctor/assess.cpp).

// The name of `value`, from its enumeration's table; InternalError for a value the table lacks
// (never another value's name).
template <typename E>
  requires requires(E v) { enum_names(v); }
std::string enum_name(E value) {
  for (const auto& [v, name] : enum_names(value))
    if (v == value) return name;
  throw InternalError("an enumerator without a name (" + std::to_string(static_cast<int>(value)) +
                      "): kscope bug, please report it");
}

// The value named `name`; nullopt for a name the table lacks.
template <typename E>
  requires requires(E v) { enum_names(v); }
std::optional<E> enum_named(std::string_view name) {
  for (const auto& [v, n] : enum_names(E{}))
    if (name == n) return v;
  return std::nullopt;
}

// "'a', 'b' or 'c'": the names a caller may give.
template <typename E>
  requires requires(E v) { enum_names(v); }
std::string enum_choices(const char* quote = "'") {
  const auto names = enum_names(E{});
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + quote + names[i].name + quote;
  return out;
}

}  // namespace kscope::detail
