#pragma once
// Finding the Nsight Compute CLI and checking that kscope can drive it. Used by Backend::ncu before
// it starts anything, and by `kscope doctor`.
#include <optional>
#include <string>
#include <vector>

#include "backends/ncu/ncu_version.hpp"

namespace kscope::ncu {

// Where to look, in order. from_environment() is the real search; tests build their own.
struct NcuSearch {
  std::string explicit_path;  // $KSCOPE_NCU: that file and nothing else
  std::string path_variable;  // $PATH, searched for "ncu"
  std::vector<std::string> fixed_paths{"/usr/local/cuda/bin/ncu"};
  std::string install_root = "/opt/nvidia/nsight-compute";  // <root>/<version>/ncu, newest first

  static NcuSearch from_environment();
};

// The first executable ncu of the search; empty when there is none. `tried` receives the places
// looked at, for the message.
std::string find_ncu(const NcuSearch& search, std::vector<std::string>* tried = nullptr);

struct NcuProbe {
  std::string path;                   // empty: not found
  std::string version_line;           // "Version 2025.3.1.0 (build 36398880) (public-release)"
  std::optional<NcuVersion> version;  // parsed from version_line
  std::string problem;                // empty when kscope can drive it; else what is wrong and the fix
};

// Finds ncu and runs `ncu --version`. Never throws: every failure is a problem text.
NcuProbe probe_ncu(const NcuSearch& search = NcuSearch::from_environment());

// probe_ncu(), or BackendError with its problem.
NcuProbe require_ncu();

}  // namespace kscope::ncu
