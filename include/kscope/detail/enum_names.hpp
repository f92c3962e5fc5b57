#pragma once
// The names of the settings' enumerations and of the collection scopes, each enumeration's listed
// once (src/core/enum_names.cpp): to_string, the results file and the manifest, and the Python
// module's enumerations (whose option checks take their names from them) read these tables.
#include <span>
#include <string>

#include "kscope/errors.hpp"
#include "kscope/info_collector.hpp"
#include "kscope/settings.hpp"

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

}  // namespace kscope::detail
