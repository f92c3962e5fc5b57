// The names of the settings' enumerations and of the collection scopes (kscope/detail/enum_names.hpp).
#include "kscope/detail/enum_names.hpp"

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

}  // namespace kscope::detail
