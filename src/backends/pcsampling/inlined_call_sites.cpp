#include "backends/pcsampling/inlined_call_sites.hpp"

#include <charconv>
#include <set>

#include "backends/pcsampling/cubin_lines.hpp"

namespace kscope::pcsampling {
namespace {

// One metadata node of the IR's text: `!12 = distinct !DILocation(line: 3, scope: !10, ...)`.
struct Node {
  std::string_view kind;    // DILocation, DIFile, DISubprogram, DILexicalBlockFile, ...
  std::string_view fields;  // what is between its parentheses
};

std::uint64_t number(std::string_view text) {
  std::uint64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

// The value of `key: ...` among a node's fields: a string's contents, a reference's number
// ("!10" -> "10"), or the bare token; empty without that key.
std::string_view field(std::string_view fields, std::string_view key) {
  for (std::size_t at = 0; (at = fields.find(key, at)) != std::string_view::npos; at += key.size()) {
    const bool starts = at == 0 || fields[at - 1] == ' ' || fields[at - 1] == '(';
    const std::size_t colon = at + key.size();
    if (!starts || fields.substr(colon, 2) != ": ") continue;
    std::string_view value = fields.substr(colon + 2);
    if (value.starts_with('"')) {
      const std::size_t end = value.find('"', 1);
      return value.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1);
    }
    value = value.substr(0, value.find_first_of(",)"));
    return value.starts_with('!') ? value.substr(1) : value;
  }
  return {};
}

std::map<std::uint64_t, Node> nodes_of(std::string_view ir) {
  std::map<std::uint64_t, Node> nodes;  // by number: the first chain of a line is the same on every read
  for (std::size_t start = 0; start < ir.size();) {
    std::size_t end = ir.find('\n', start);
    if (end == std::string_view::npos) end = ir.size();
    std::string_view line = ir.substr(start, end - start);
    start = end + 1;
    if (line.size() < 2 || line[0] != '!' || line[1] < '0' || line[1] > '9') continue;
    const std::size_t equals = line.find(" = ");
    if (equals == std::string_view::npos) continue;
    std::string_view rest = line.substr(equals + 3);
    if (rest.starts_with("distinct ")) rest.remove_prefix(9);
    const std::size_t open = rest.find('(');
    if (!rest.starts_with('!') || open == std::string_view::npos || !rest.ends_with(')')) continue;
    nodes[number(line.substr(1, equals - 1))] = {rest.substr(1, open - 1), rest.substr(open + 1, rest.size() - open - 2)};
  }
  return nodes;
}

}  // namespace

InlinedCallSites::InlinedCallSites(std::string_view llvm_ir) {
  const auto nodes = nodes_of(llvm_ir);
  auto node = [&](std::string_view id) -> const Node* {
    const auto found = nodes.find(number(id));
    return id.empty() || found == nodes.end() ? nullptr : &found->second;
  };
  auto file_of = [&](const Node* scope) -> std::string {
    const Node* f = scope ? node(field(scope->fields, "file")) : nullptr;
    if (f == nullptr) return {};
    const std::string name(field(f->fields, "filename")), dir(field(f->fields, "directory"));
    return name.starts_with('/') || dir.empty() ? name : dir + "/" + name;
  };
  auto function_of = [&](const Node* scope) -> std::string {
    for (int depth = 0; scope != nullptr && depth < 64; ++depth) {
      if (scope->kind == "DISubprogram") {
        const std::string_view linkage = field(scope->fields, "linkageName");
        return function_name(std::string(linkage.empty() ? field(scope->fields, "name") : linkage));
      }
      scope = node(field(scope->fields, "scope"));
    }
    return {};
  };
  auto frame = [&](const Node& location) {
    const Node* scope = node(field(location.fields, "scope"));
    return SourceLocation{file_of(scope), static_cast<std::uint32_t>(number(field(location.fields, "line"))),
                          function_of(scope)};
  };

  std::map<std::pair<std::string, std::uint32_t>, std::set<std::pair<std::string, std::uint32_t>>> outermost;
  for (const auto& [id, location] : nodes) {
    if (location.kind != "DILocation" || field(location.fields, "inlinedAt").empty()) continue;
    std::vector<SourceLocation> frames{frame(location)};
    for (const Node* at = node(field(location.fields, "inlinedAt")); at != nullptr && frames.size() < 64;
         at = node(field(at->fields, "inlinedAt")))
      frames.push_back(frame(*at));
    const SourceLocation& inner = frames.front();
    const SourceLocation& outer = frames.back();
    for (std::size_t i = 0; i + 1 < frames.size(); ++i)  // Triton's helpers: scoped in the kernel, no function of their own
      if (frames[i].function == outer.function) frames[i].function.clear();
    if (inner.line == 0 || outer.line == 0 || inner.file.empty()) continue;
    const std::pair key{inner.file, inner.line};
    outermost[key].insert({outer.file, outer.line});
    chains_.try_emplace(key, std::move(frames));
  }
  for (const auto& [key, ends] : outermost)
    if (ends.size() > 1) chains_.erase(key);  // inlined from several lines: which one ran is unknown
}

std::vector<SourceLocation> InlinedCallSites::chain(const std::string& file, std::uint32_t line) const {
  const auto found = chains_.find({file, line});
  return found == chains_.end() ? std::vector<SourceLocation>{} : found->second;
}

}  // namespace kscope::pcsampling
