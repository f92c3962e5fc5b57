#include "backends/pcsampling/cubin_store.hpp"

#include <cupti_pcsampling.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "backends/ncu/subprocess.hpp"

namespace kscope::pcsampling {
namespace {

namespace fs = std::filesystem;

std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<std::string> split(const std::string& list, char by) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, by);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// nvdisasm: KSCOPE_NVDISASM, else the CUDA toolkit's (CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda);
// kscope.analyze.lines points KSCOPE_NVDISASM at Triton's own where the toolkit has none.
std::string nvdisasm() {
  if (std::string given = environment("KSCOPE_NVDISASM"); !given.empty()) return given;
  std::vector<std::string> dirs;
  for (const char* home : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string h = environment(home); !h.empty()) dirs.push_back(h + "/bin");
  for (const auto& d : split(environment("PATH"), ':')) dirs.push_back(d);
  dirs.push_back("/usr/local/cuda/bin");
  for (const auto& d : dirs)
    if (const std::string p = d + "/nvdisasm"; access(p.c_str(), X_OK) == 0) return p;
  return "";
}

// The cubin's SASS, or why there is none.
std::optional<SassListing> disassemble(const std::string& cubin, std::string& why) {
  const std::string program = nvdisasm();
  if (program.empty()) {
    why = "no SASS text: nvdisasm was not found (install the CUDA toolkit's, or set KSCOPE_NVDISASM)";
    return std::nullopt;
  }
  std::string path = (fs::temp_directory_path() / "kscope-cubin-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    why = "no SASS text: a temporary file for nvdisasm could not be made";
    return std::nullopt;
  }
  const bool written = ::write(fd, cubin.data(), cubin.size()) == static_cast<ssize_t>(cubin.size());
  ::close(fd);
  std::optional<SassListing> listing;
  try {
    if (!written) throw std::runtime_error("the cubin could not be written to " + path);
    const ncu::CapturedRun run = ncu::run_captured({program, "-c", path});
    if (run.exit_code != 0) throw std::runtime_error(program + " failed: " + run.output.substr(0, 300));
    listing = parse_sass_listing(run.output);
  } catch (const std::exception& e) {
    why = std::string("no SASS text: ") + e.what();
  }
  ::unlink(path.c_str());
  return listing;
}

// CUPTI's own reading of the cubin's line table: the innermost line only, for a cubin whose table
// kscope's reader could not read.
std::vector<SourceLocation> cupti_line(const std::string& cubin, const std::string& function, std::uint64_t pc) {
  CUpti_GetSassToSourceCorrelationParams p{};
  p.size = CUpti_GetSassToSourceCorrelationParamsSize;
  p.cubin = cubin.data();
  p.cubinSize = cubin.size();
  p.functionName = function.c_str();
  p.pcOffset = pc;
  std::vector<SourceLocation> out;
  if (cuptiGetSassToSourceCorrelation(&p) == CUPTI_SUCCESS && p.lineNumber != 0 && p.fileName != nullptr) {
    const std::string file = p.fileName, dir = p.dirName ? p.dirName : "";
    out.push_back({file.starts_with('/') || dir.empty() ? file : dir + "/" + file, p.lineNumber, function_name(function)});
  }
  std::free(p.fileName);
  std::free(p.dirName);
  return out;
}

}  // namespace

std::uint64_t cubin_crc(const void* cubin, std::size_t size) {
  CUpti_GetCubinCrcParams p{};
  p.size = CUpti_GetCubinCrcParamsSize;
  p.cubin = cubin;
  p.cubinSize = size;
  return cuptiGetCubinCrc(&p) == CUPTI_SUCCESS ? p.cubinCrc : 0;
}

CubinStore& CubinStore::process() {
  static CubinStore store;
  return store;
}

void CubinStore::add(const void* cubin, std::size_t size) {
  if (cubin == nullptr || size == 0) return;
  const std::uint64_t crc = cubin_crc(cubin, size);
  std::lock_guard lock(mutex_);
  Cubin& kept = cubins_[crc];
  if (kept.bytes.empty()) {
    kept.bytes.assign(static_cast<const char*>(cubin), size);
    loaded_since_scan_ = true;
  }
  kept.loaded = true;
}

const CubinLines& CubinStore::Cubin::line_table() {
  if (!lines) lines = std::make_unique<CubinLines>(bytes);
  return *lines;
}

void CubinStore::scan_directories() {
  scanned_ = true;
  loaded_since_scan_ = false;
  std::vector<std::string> roots = split(environment("KSCOPE_CUBIN_PATH"), ':');
  if (std::string triton = environment("TRITON_CACHE_DIR"); !triton.empty()) roots.push_back(triton);
  else if (std::string home = environment("HOME"); !home.empty()) roots.push_back(home + "/.triton/cache");
  constexpr std::size_t kMostFiles = 50000;
  std::size_t seen = 0;
  for (const auto& root : roots) {
    std::error_code ec;
    std::vector<fs::path> files;
    if (fs::is_regular_file(root, ec)) {
      files.push_back(root);
    } else {
      for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
           !ec && it != end && seen < kMostFiles; it.increment(ec))
        if (it->path().extension() == ".cubin" && it->is_regular_file(ec)) files.push_back(it->path()), ++seen;
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes{std::istreambuf_iterator<char>(in), {}};
      if (bytes.empty()) continue;
      Cubin& cubin = cubins_[cubin_crc(bytes.data(), bytes.size())];
      if (cubin.bytes.empty()) cubin.bytes = bytes;
      if (cubin.path.empty()) cubin.path = f.string();
    }
  }
}

CubinStore::Cubin* CubinStore::find(std::uint64_t crc, const std::string& function) {
  auto found = cubins_.find(crc);
  if (found == cubins_.end() && !scanned_) {
    scan_directories();
    found = cubins_.find(crc);
  }
  if (found != cubins_.end()) return &found->second;
  for (auto& [other, cubin] : cubins_) {
    if (!cubin.loaded) continue;
    const std::vector<std::string> functions = cubin.line_table().functions();
    if (std::find(functions.begin(), functions.end(), function) != functions.end()) return &cubin;
  }
  return nullptr;
}

std::vector<SourceLocation> CubinStore::source(std::uint64_t crc, const std::string& function, std::uint64_t pc,
                                               std::string& why) {
  std::lock_guard lock(mutex_);
  Cubin* cubin = find(crc, function);
  if (cubin == nullptr) {
    why = "its module was loaded before kscope started listening and its cubin is in neither KSCOPE_CUBIN_PATH nor "
          "Triton's cache: samples are by function and offset. Sample before the kernel's first launch, or give its "
          "cubin (nvcc -cubin, cuobjdump -xelf all) in KSCOPE_CUBIN_PATH";
    return {};
  }
  if (!cubin->line_table().problem().empty()) {
    why = "the inlined-call chains are unknown (" + cubin->lines->problem() + "): lines are CUPTI's innermost ones";
    return cupti_line(cubin->bytes, function, pc);
  }
  if (cubin->lines->empty())
    why = "it has no line information (CUDA C++: build with -lineinfo; Triton: unset TRITON_DISABLE_LINE_INFO): "
          "samples are by function and offset";
  std::vector<SourceLocation> frames = cubin->lines->at(function, pc);
  // Only code inlined from other files without call sites is looked up (a plain kernel's cubin never
  // sends kscope through Triton's cache).
  if (frames.empty() || !cubin->lines->call_sites_missing(function)) return frames;
  const InlinedCallSites* sites = call_sites(*cubin);
  if (sites != nullptr)
    if (std::vector<SourceLocation> chain = sites->chain(frames.front().file, frames.front().line); !chain.empty())
      return chain;
  if (sites == nullptr)
    why = "its compiler recorded no call sites for the code it inlined from other files, and no LLVM IR of it "
          "(<kernel>.llir in Triton's cache) was found to read them from, so those samples stay on the inlined "
          "function's line (Triton's tl.* helpers on triton/language/*.py) instead of the line that called it. Triton "
          "built on LLVM 22 or later records them in the cubin; CUDA C++: leave out -no-lineinfo-inlined-at";
  else if (const auto entry = cubin->lines->at(function, 0); entry.empty() || frames.front().file != entry.back().file)
    why = "lines of " + frames.front().file + " inlined from more than one line of the kernel stay on their own line: "
          "its cubin records no call sites, and its LLVM IR cannot tell which call ran";
  return frames;
}

const InlinedCallSites* CubinStore::call_sites(Cubin& cubin) {
  if (!cubin.call_sites) {
    if (cubin.path.empty() && (!scanned_ || loaded_since_scan_)) scan_directories();  // compiled since: cached now
    std::string ir;
    if (!cubin.path.empty()) {
      std::ifstream in(fs::path(cubin.path).replace_extension(".llir"), std::ios::binary);
      ir.assign(std::istreambuf_iterator<char>(in), {});
    }
    cubin.call_sites.emplace(ir);
  }
  return cubin.call_sites->empty() ? nullptr : &*cubin.call_sites;
}

std::string CubinStore::sass(std::uint64_t crc, const std::string& function, std::uint64_t pc, std::string& why) {
  std::lock_guard lock(mutex_);
  Cubin* cubin = find(crc, function);
  if (cubin == nullptr) return "";
  if (!cubin->sass) {
    cubin->sass = disassemble(cubin->bytes, why);
    if (!cubin->sass) cubin->sass.emplace();  // asked once
  }
  const auto f = cubin->sass->find(function);
  if (f == cubin->sass->end()) return "";
  const auto i = f->second.find(pc);
  return i == f->second.end() ? "" : i->second;
}

}  // namespace kscope::pcsampling
