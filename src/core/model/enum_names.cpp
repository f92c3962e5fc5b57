// The names of the settings' enumerations and of the collection scopes (kscope/detail/enum_names.hpp),
// and to_string of a collection scope.
#include "kscope/detail/enum_names.hpp"

#include "core/model/settings_table.hpp"
#include "kscope/info_collector.hpp"
#include "kscope/metrics.hpp"
#include "kscope/roofline.hpp"
#include "kscope/value.hpp"
#include "kscope/work.hpp"

namespace kscope::detail {

std::span<const EnumName<ReplayMode>> enum_names(ReplayMode) {
  static constexpr EnumName<ReplayMode> names[] = {{ReplayMode::kernel, "kernel"}, {ReplayMode::range, "range"}};
  return names;
}

std::span<const EnumName<CacheControl>> enum_names(CacheControl) {
  static constexpr EnumName<CacheControl> names[] = {{CacheControl::all, "all"}, {CacheControl::none, "none"}};
  return names;
}

std::span<const EnumName<ClockControl>> enum_names(ClockControl) {
  static constexpr EnumName<ClockControl> names[] = {{ClockControl::none, "none"}, {ClockControl::base, "base"}};
  return names;
}

std::span<const EnumName<ThrottledRuns>> enum_names(ThrottledRuns) {
  static constexpr EnumName<ThrottledRuns> names[] = {{ThrottledRuns::keep, "keep"},
                                                      {ThrottledRuns::exclude, "exclude"}};
  return names;
}

std::span<const EnumName<Verbosity>> enum_names(Verbosity) {
  static constexpr EnumName<Verbosity> names[] = {
      {Verbosity::quiet, "quiet"}, {Verbosity::info, "info"}, {Verbosity::debug, "debug"}};
  return names;
}

std::span<const EnumName<ThermalMode>> enum_names(ThermalMode) {
  static constexpr EnumName<ThermalMode> names[] = {
      {ThermalMode::automatic, "automatic"}, {ThermalMode::manual, "manual"}, {ThermalMode::off, "off"}};
  return names;
}

std::span<const EnumName<InfoCollectorErrors>> enum_names(InfoCollectorErrors) {
  static constexpr EnumName<InfoCollectorErrors> names[] = {{InfoCollectorErrors::warn, "warn"},
                                                            {InfoCollectorErrors::raise, "raise"}};
  return names;
}

std::span<const EnumName<Sampling>> enum_names(Sampling) {
  static constexpr EnumName<Sampling> names[] = {{Sampling::fixed, "fixed"}, {Sampling::adaptive, "adaptive"}};
  return names;
}

std::span<const EnumName<CollectionScope>> enum_names(CollectionScope) {
  static constexpr EnumName<CollectionScope> names[] = {{CollectionScope::once, "once"},
                                                        {CollectionScope::config, "config"},
                                                        {CollectionScope::run, "run"},
                                                        {CollectionScope::annotation, "annotation"}};
  return names;
}

std::span<const EnumName<ColumnType>> enum_names(ColumnType) {
  using T = ColumnType;
  static constexpr EnumName<T> names[] = {{T::text, "text"},
                                          {T::integer, "integer"},
                                          {T::optional_integer, "optional_integer"},
                                          {T::real, "real"},
                                          {T::boolean, "boolean"},
                                          {T::optional_boolean, "optional_boolean"},
                                          {T::baseline, "baseline"}};
  return names;
}

std::span<const EnumName<Precision>> enum_names(Precision) {
  using P = Precision;
  static constexpr EnumName<P> names[] = {
      {P::fp64, "fp64"}, {P::fp32, "fp32"}, {P::fp16, "fp16"}, {P::bf16, "bf16"}, {P::fp8, "fp8"}};
  return names;
}

std::span<const EnumName<Bound>> enum_names(Bound) {
  static constexpr EnumName<Bound> names[] = {
      {Bound::memory, "memory"}, {Bound::compute, "compute"}, {Bound::latency, "latency"}};
  return names;
}

std::span<const EnumName<ValueType>> enum_names(ValueType) {
  using V = ValueType;
  static constexpr EnumName<V> names[] = {
      {V::integer, "integer"}, {V::real, "double"}, {V::text, "string"}, {V::boolean, "bool"}};
  return names;
}

std::span<const EnumName<MetricType>> enum_names(MetricType) {
  using M = MetricType;
  static constexpr EnumName<M> names[] = {
      {M::counter, "counter"}, {M::ratio, "ratio"}, {M::throughput, "throughput"}};
  return names;
}

std::span<const EnumName<Bottleneck>> enum_names(Bottleneck) {
  using B = Bottleneck;
  static constexpr EnumName<B> names[] = {
      {B::compute_bound, "compute-bound"}, {B::memory_bound, "memory-bound"}, {B::latency_bound, "latency-bound"}};
  return names;
}

std::span<const EnumName<SettingsRole>> enum_names(SettingsRole) {
  using R = SettingsRole;
  static constexpr EnumName<R> names[] = {
      {R::measurement, "measurement"}, {R::summary, "summary"}, {R::session, "session"}};
  return names;
}

}  // namespace kscope::detail

namespace kscope {

std::string to_string(CollectionScope scope) { return detail::enum_name(scope); }

}  // namespace kscope
