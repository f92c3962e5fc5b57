#pragma once
// A measurement backend, by its name: what Settings::backend chooses, what the Backend column and
// results files say measured. kscope's own are constants (Backend::cupti); every backend, these and
// any a program adds, is defined once in the registry (kscope/backend_registry.hpp).
#include <iosfwd>
#include <string>
#include <string_view>

namespace kscope {

// What measures a session (Settings::backend): one of the registered backends, by name
// (kscope/backend_registry.hpp).
class Backend {
 public:
  constexpr Backend() = default;  // from_metrics

  static const Backend from_metrics;  // the default: chosen from Settings::metrics (chosen_backend)
  static const Backend cupti;         // CUPTI's activity records: each kernel's GPU start and end
  static const Backend events;        // CUDA events around each region; no kernel names
  static const Backend counters;      // CUPTI's range profiler: hardware metrics named as Nsight Compute names them
  static const Backend automatic;     // counters where permitted, else cupti, with a warning
  static const Backend ncu;           // Nsight Compute's CLI: re-runs the program under ncu, imports its report
  static const Backend simulated;     // kscope/testing.hpp's, for tests; never a Settings::backend choice

  // The registered backend of this name; throws ConfigError naming the registered ones.
  static Backend named(std::string_view name);

  constexpr std::string_view name() const { return name_; }  // "cupti", "counters", ...: the Backend column
  // Two backends are the same when their names are.
  friend constexpr bool operator==(Backend a, Backend b) { return a.name_ == b.name_; }

 private:
  constexpr explicit Backend(std::string_view name) : name_(name) {}
  friend class BackendRegistry;

  std::string_view name_ = "from_metrics";  // a literal, or a registered definition's name: never dangles
};

inline constexpr Backend Backend::from_metrics{"from_metrics"};
inline constexpr Backend Backend::cupti{"cupti"};
inline constexpr Backend Backend::events{"events"};
inline constexpr Backend Backend::counters{"counters"};
inline constexpr Backend Backend::automatic{"automatic"};
inline constexpr Backend Backend::ncu{"ncu"};
inline constexpr Backend Backend::simulated{"test (simulated)"};

std::string to_string(Backend backend);  // its name: "cupti", ..., "test (simulated)"
std::ostream& operator<<(std::ostream& out, Backend backend);

}  // namespace kscope
