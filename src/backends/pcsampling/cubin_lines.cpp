#include "backends/pcsampling/cubin_lines.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/model/kernel_names.hpp"

namespace kscope::pcsampling {
namespace {

// Bytes read in bounds: a truncated or corrupt cubin is an error, never a read past its end.
class Bytes {
 public:
  Bytes(std::string_view data, std::size_t pos = 0) : data_(data), pos_(pos) {}
  std::size_t pos() const { return pos_; }
  bool done() const { return pos_ >= data_.size(); }
  void seek(std::size_t pos) {
    if (pos > data_.size()) throw std::runtime_error("an offset past the end");
    pos_ = pos;
  }
  template <typename T>
  T fixed() {
    if (data_.size() - pos_ < sizeof(T) || pos_ > data_.size()) throw std::runtime_error("truncated");
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::uint64_t uleb() {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const auto b = fixed<std::uint8_t>();
      if (shift < 64) v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::int64_t sleb() {
    std::int64_t v = 0;
    unsigned shift = 0;
    std::uint8_t b = 0;
    do {
      b = fixed<std::uint8_t>();
      if (shift < 64) v |= static_cast<std::int64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= -(std::int64_t{1} << shift);
    return v;
  }
  std::string cstring() {
    const auto end = data_.find('\0', pos_);
    if (end == std::string_view::npos) throw std::runtime_error("an unterminated string");
    std::string s(data_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

 private:
  std::string_view data_;
  std::size_t pos_;
};

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0, size = 0, entry_size = 0;
  std::uint32_t link = 0, info = 0;
};

struct Symbol {
  std::string name;
  std::uint64_t value = 0, size = 0;
  unsigned char type = 0;
};

constexpr std::uint32_t kRela = 4;
constexpr unsigned char kFunction = 2;  // STT_FUNC

std::string_view contents(std::string_view elf, const Section& s) {
  if (s.offset > elf.size() || s.size > elf.size() - s.offset) throw std::runtime_error("section " + s.name + " out of bounds");
  return elf.substr(s.offset, s.size);
}

std::string string_at(std::string_view table, std::uint64_t offset) {
  if (offset >= table.size()) return {};
  const auto end = table.find('\0', offset);
  return std::string(table.substr(offset, end == std::string_view::npos ? std::string_view::npos : end - offset));
}

}  // namespace

std::string function_name(const std::string& symbol) {
  const std::string name = symbol.starts_with("_Z") ? demangle(symbol) : symbol;
  // "void add<float>(float*, int)": the parameters after the first '(' outside template brackets,
  // the return type before the last space outside them.
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    else if (name[i] == '>') --depth;
    else if (name[i] == ' ' && depth == 0) start = i + 1;
    else if (name[i] == '(' && depth == 0 && i > 0) return name.substr(start, i - start);
  }
  return name;
}

CubinLines::CubinLines(std::string_view cubin) {
  try {
    parse(cubin);
  } catch (const std::exception& e) {
    sequences_.clear();
    problem_ = std::string("its line table could not be read (") + e.what() + ")";
  }
}

void CubinLines::parse(std::string_view elf) {
  if (elf.size() < 64 || elf.substr(0, 4) != "\x7f" "ELF" || elf[4] != 2 || elf[5] != 1)
    throw std::runtime_error("not a 64-bit little-endian ELF");
  Bytes header(elf, 0x28);
  const auto section_offset = header.fixed<std::uint64_t>();
  header.seek(0x3a);
  const auto section_entry = header.fixed<std::uint16_t>();
  const auto section_count = header.fixed<std::uint16_t>();
  const auto names_index = header.fixed<std::uint16_t>();
  if (section_entry < 64 || names_index >= section_count) throw std::runtime_error("bad section headers");
  std::vector<Section> sections(section_count);
  for (std::size_t i = 0; i < section_count; ++i) {
    Bytes s(elf);
    s.seek(section_offset + i * section_entry);
    Section& out = sections[i];
    out.name = std::to_string(s.fixed<std::uint32_t>());  // resolved below
    out.type = s.fixed<std::uint32_t>();
    s.fixed<std::uint64_t>();  // flags
    s.fixed<std::uint64_t>();  // address
    out.offset = s.fixed<std::uint64_t>();
    out.size = s.fixed<std::uint64_t>();
    out.link = s.fixed<std::uint32_t>();
    out.info = s.fixed<std::uint32_t>();
    s.fixed<std::uint64_t>();  // alignment
    out.entry_size = s.fixed<std::uint64_t>();
  }
  const std::string_view names = contents(elf, sections[names_index]);
  for (Section& s : sections) s.name = string_at(names, std::stoull(s.name));
  auto find = [&](const std::string& name) -> const Section* {
    for (const Section& s : sections)
      if (s.name == name) return &s;
    return nullptr;
  };
  const Section* lines = find(".debug_line");
  if (lines == nullptr) return;  // built without line information
  const std::string_view program = contents(elf, *lines);
  const Section* str = find(".debug_str");
  const std::string_view strings = str ? contents(elf, *str) : std::string_view();

  std::vector<Symbol> symbols;
  if (const Section* symtab = find(".symtab"); symtab && symtab->link < sections.size()) {
    const std::string_view table = contents(elf, *symtab), symbol_names = contents(elf, sections[symtab->link]);
    for (std::size_t at = 0; at + 24 <= table.size(); at += 24) {
      Bytes s(table, at);
      Symbol& sym = symbols.emplace_back();
      sym.name = string_at(symbol_names, s.fixed<std::uint32_t>());
      sym.type = s.fixed<std::uint8_t>() & 0xf;
      s.fixed<std::uint8_t>();
      s.fixed<std::uint16_t>();
      sym.value = s.fixed<std::uint64_t>();
      sym.size = s.fixed<std::uint64_t>();
    }
  }
  // Each sequence's start address is relocated against its function's symbol.
  std::map<std::uint64_t, std::pair<std::string, std::int64_t>> relocated;  // offset in .debug_line -> symbol, addend
  for (const Section& s : sections) {
    if (s.type != kRela || s.name != ".rela.debug_line") continue;
    const std::string_view table = contents(elf, s);
    for (std::size_t at = 0; at + 24 <= table.size(); at += 24) {
      Bytes r(table, at);
      const auto offset = r.fixed<std::uint64_t>();
      const auto info = r.fixed<std::uint64_t>();
      const auto addend = r.fixed<std::int64_t>();
      const std::uint64_t index = info >> 32;
      if (index < symbols.size()) relocated[offset] = {symbols[index].name, addend};
    }
  }
  // Without relocations (a linked image), the function whose range holds the address.
  auto function_at = [&](std::uint64_t address) -> std::pair<std::string, std::uint64_t> {
    for (const Symbol& s : symbols)
      if (s.type == kFunction && address >= s.value && address < s.value + std::max<std::uint64_t>(s.size, 1))
        return {s.name, s.value};
    return {"", 0};
  };

  Bytes in(program);
  while (!in.done()) {
    const std::size_t unit_start = in.pos();
    auto length = static_cast<std::uint64_t>(in.fixed<std::uint32_t>());
    if (length == 0xffffffff) throw std::runtime_error("64-bit DWARF line tables are not read");
    const std::uint64_t unit_end = in.pos() + length;
    if (unit_end > program.size()) throw std::runtime_error("a line-table unit past the section's end");
    const auto version = in.fixed<std::uint16_t>();
    if (version < 2 || version > 4) throw std::runtime_error("DWARF line table version " + std::to_string(version));
    const auto header_length = in.fixed<std::uint32_t>();
    const std::size_t program_start = in.pos() + header_length;
    const auto min_instruction = in.fixed<std::uint8_t>();
    if (version >= 4) in.fixed<std::uint8_t>();  // maximum operations per instruction
    in.fixed<std::uint8_t>();                     // default is_stmt
    const auto line_base = in.fixed<std::int8_t>();
    const auto line_range = in.fixed<std::uint8_t>();
    const auto opcode_base = in.fixed<std::uint8_t>();
    if (line_range == 0 || opcode_base == 0) throw std::runtime_error("a line-table header with line_range 0");
    std::vector<std::uint8_t> operands(opcode_base, 0);
    for (std::size_t i = 1; i < opcode_base; ++i) operands[i] = in.fixed<std::uint8_t>();
    std::vector<std::string> directories;
    for (std::string d = in.cstring(); !d.empty(); d = in.cstring()) directories.push_back(d);
    std::vector<std::string>& files = files_.emplace_back();
    auto add_file = [&](Bytes& b, const std::string& name) {
      const std::uint64_t dir = b.uleb();
      b.uleb();  // modification time
      b.uleb();  // length
      files.push_back(name.starts_with('/') || dir == 0 || dir > directories.size()
                          ? name
                          : directories[dir - 1] + "/" + name);
    };
    for (std::string f = in.cstring(); !f.empty(); f = in.cstring()) add_file(in, f);
    in.seek(program_start);

    std::vector<Row> rows;
    std::string function;
    std::uint64_t base = 0;
    Row state{0, 1, 1, 0, ""};
    auto reset = [&] { state = Row{0, 1, 1, 0, ""}; };
    auto end_sequence = [&] {
      if (!function.empty() && !rows.empty()) {
        std::vector<Row>& kept = sequences_[function];
        kept.insert(kept.end(), rows.begin(), rows.end());
        unit_of_[function] = files_.size() - 1;
        end_of_[function] = std::max(end_of_[function], state.address);
      }
      rows.clear();
      function.clear();
      reset();
    };
    while (in.pos() < unit_end) {
      const auto op = in.fixed<std::uint8_t>();
      if (op >= opcode_base) {
        const int adjusted = op - opcode_base;
        state.address += static_cast<std::uint64_t>(adjusted / line_range) * min_instruction;
        state.line = static_cast<std::uint32_t>(static_cast<std::int64_t>(state.line) + line_base + adjusted % line_range);
        rows.push_back(state);
        continue;
      }
      switch (op) {
        case 0: {  // extended
          const std::uint64_t size = in.uleb();
          const std::size_t next = in.pos() + size;
          if (size == 0 || next > unit_end) throw std::runtime_error("an extended opcode past its unit");
          const auto sub = in.fixed<std::uint8_t>();
          if (sub == 1) {  // end_sequence
            end_sequence();
          } else if (sub == 2) {  // set_address
            const std::size_t operand = in.pos();
            const auto address = in.fixed<std::uint64_t>();
            if (const auto r = relocated.find(operand); r != relocated.end()) {
              function = r->second.first;
              base = 0;
              state.address = address + static_cast<std::uint64_t>(r->second.second);
            } else {
              const auto [name, start] = function_at(address);
              function = name;
              base = start;
              state.address = address - base;
            }
          } else if (sub == 3) {  // define_file
            Bytes b(program, in.pos());
            add_file(b, b.cstring());
          } else if (sub == 0x90) {  // NVIDIA: the inlining context of the rows that follow
            state.context = static_cast<std::uint32_t>(in.uleb());
            state.function = state.context != 0 ? string_at(strings, in.uleb()) : std::string();
          }
          in.seek(next);
          break;
        }
        case 1: rows.push_back(state); break;  // copy
        case 2: state.address += in.uleb() * min_instruction; break;
        case 3: state.line = static_cast<std::uint32_t>(static_cast<std::int64_t>(state.line) + in.sleb()); break;
        case 4: state.file = static_cast<std::uint32_t>(in.uleb()); break;
        case 8: state.address += static_cast<std::uint64_t>((255 - opcode_base) / line_range) * min_instruction; break;
        case 9: state.address += in.fixed<std::uint16_t>(); break;
        default:  // column, negate_stmt, basic_block, prologue_end, set_isa, ...: operands skipped
          for (std::size_t k = 0; k < operands[op]; ++k) in.uleb();
      }
    }
    end_sequence();
    in.seek(unit_end);
    (void)unit_start;
  }
}

std::string CubinLines::file_name(std::uint32_t index, std::size_t unit) const {
  const std::vector<std::string>& files = files_.at(unit);
  return index >= 1 && index <= files.size() ? files[index - 1] : std::string();
}

std::vector<SourceLocation> CubinLines::at(const std::string& function, std::uint64_t pc_offset) const {
  const auto found = sequences_.find(function);
  if (found == sequences_.end()) return {};
  const std::vector<Row>& rows = found->second;
  if (pc_offset >= code_size(function)) return {};  // past the function's code
  const std::size_t unit = unit_of_.at(function);
  // The last row at or before the instruction (rows of one address: the last one holds).
  std::size_t row = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].address <= pc_offset && (row == rows.size() || rows[i].address >= rows[row].address)) row = i;
  if (row == rows.size() || rows[row].line == 0) return {};
  std::vector<SourceLocation> frames;
  const std::string own = function_name(function);
  for (std::size_t depth = 0; depth < 64; ++depth) {
    const Row& r = rows[row];
    // Triton names no function for the code it inlines (its helpers' lines are scoped in the kernel):
    // such a frame is left without one rather than named after the kernel it was inlined into.
    std::string name = r.context != 0 ? function_name(r.function) : own;
    if (r.context != 0 && name == own) name.clear();
    frames.push_back({file_name(r.file, unit), r.line, name});
    if (r.context == 0) break;
    if (r.context - 1 >= row) break;  // a call site is always an earlier row
    row = r.context - 1;
  }
  return frames;
}

std::uint64_t CubinLines::code_size(const std::string& function) const {
  const auto found = end_of_.find(function);
  return found == end_of_.end() ? 0 : found->second;
}

bool CubinLines::call_sites_missing(const std::string& function) const {
  const auto found = sequences_.find(function);
  if (found == sequences_.end()) return false;
  const std::vector<Row>& rows = found->second;
  const auto inlined = [](const Row& r) { return r.context != 0; };
  const auto elsewhere = [&](const Row& r) { return r.line != 0 && r.file != rows.front().file; };
  return std::none_of(rows.begin(), rows.end(), inlined) && std::any_of(rows.begin(), rows.end(), elsewhere);
}

std::vector<std::string> CubinLines::functions() const {
  std::vector<std::string> out;
  for (const auto& [name, rows] : sequences_) out.push_back(name);
  return out;
}

}  // namespace kscope::pcsampling
