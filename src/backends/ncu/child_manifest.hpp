#pragma once
// What the child process under ncu tells the parent besides the report: the regions every recorded
// run opened (names, failures marked by the body) and, if the session failed, why. ncu records
// only ranges that contain a kernel, so a region that launched none, or one the body marked
// failed, exists only here. Written as JSON to the path in $KSCOPE_NCU_MANIFEST.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kscope/measurement_backend.hpp"

namespace kscope::ncu {

struct ManifestRun {
  std::size_t config = 0;
  std::size_t run = 0;  // recorded run, 0-based
  std::vector<RegionRecord> regions;
};

struct ManifestError {
  std::string kind;           // the kscope error class: "ConfigError", "AnnotationError", "BackendError", "Error"
  std::string message;
  std::string failed_config;  // SweepError: the config that failed; empty otherwise
  std::string cause_kind;     // SweepError: the class of its cause
};

struct ChildManifest {
  std::vector<ManifestRun> runs;       // in the order they ran
  std::optional<ManifestError> error;  // the session threw
};

// Writes atomically (a temporary file, then rename), so the parent never reads half a manifest.
// Throws Error when the file cannot be written.
void write_manifest(const ChildManifest& manifest, const std::string& path);

// nullopt when the file does not exist; throws BackendError when it is not a manifest.
std::optional<ChildManifest> read_manifest(const std::string& path);

}  // namespace kscope::ncu
