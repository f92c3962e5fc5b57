#pragma once
// The cubins of the process's modules, by the CRC CUPTI's PC sampling records name them with: kept
// as each module loads (CUPTI's resource callback), so that code compiled at run time (Triton, NVRTC)
// resolves too. A module loaded before kscope listened is looked for in KSCOPE_CUBIN_PATH and in
// Triton's cache. Each cubin's line table and SASS listing are read once, when first asked for; a
// cubin whose line table records no call sites for inlined code gets them from the LLVM IR Triton
// keeps beside it in its cache (<kernel>.llir), where there is one.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/pcsampling/cubin_lines.hpp"
#include "backends/pcsampling/inlined_call_sites.hpp"
#include "backends/pcsampling/sass_listing.hpp"

namespace kscope::pcsampling {

class CubinStore {
 public:
  static CubinStore& process();  // kept for the process: modules are loaded once

  // From the module-loaded callback (any thread): a copy of the cubin, by its CRC.
  void add(const void* cubin, std::size_t size);

  // Where instruction (function, pc_offset) of the cubin `crc` was written, innermost first (empty
  // without line information, or for a cubin never seen: `why` then says which, once per cubin).
  std::vector<SourceLocation> source(std::uint64_t crc, const std::string& function, std::uint64_t pc_offset,
                                     std::string& why);
  // Its SASS text; empty without a disassembler (`why` says so once).
  std::string sass(std::uint64_t crc, const std::string& function, std::uint64_t pc_offset, std::string& why);

 private:
  struct Cubin {
    std::string bytes;
    bool loaded = false;  // from a module load (else found in a directory)
    std::unique_ptr<CubinLines> lines;  // read when first asked for
    std::optional<SassListing> sass;
    std::string path;  // where it was found on disk; empty for a loaded module not found there
    std::optional<InlinedCallSites> call_sites;  // from the LLVM IR beside it; read when first asked for
    const CubinLines& line_table();
  };
  // With mutex_ held: the call sites of the cubin's inlined code from the .llir beside it (the cubin
  // directories scanned again for a loaded one not found there yet), else nullptr.
  const InlinedCallSites* call_sites(Cubin& cubin);
  // With mutex_ held: the cubin of that CRC (the cubin directories scanned once on a miss), else the
  // loaded cubin whose line table has `function` (should CUPTI's CRC of a record differ from ours).
  Cubin* find(std::uint64_t crc, const std::string& function);
  void scan_directories();

  std::mutex mutex_;
  std::map<std::uint64_t, Cubin> cubins_;
  bool scanned_ = false;
  bool loaded_since_scan_ = false;  // a module loaded since the directories were last scanned
};

// The CRC CUPTI gives the cubin in its records.
std::uint64_t cubin_crc(const void* cubin, std::size_t size);

}  // namespace kscope::pcsampling
