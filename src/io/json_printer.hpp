#pragma once
// JSON text printed a piece at a time, as nlohmann's dump(1) prints a whole document: kscope's own
// files (the results file, an evaluation's) are written this way, so that their size in memory does
// not grow with the sweep's. Invalid UTF-8 in a string (a mangled kernel name, say) becomes U+FFFD
// instead of throwing.
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

namespace kscope::detail {

// `j` as dump(1) prints it.
std::string dumped_json(const nlohmann::ordered_json& j);

// An object's members as they are printed inside a document: "\n \"key\": value" each, commas
// between.
std::string json_members(const nlohmann::ordered_json& object);

// Appends `j` as j.dump(1) prints it `depth` levels deep into a document, without the serializer
// dump builds for every call: the long lists of kscope's files, an element at a time.
void append_json(std::string& out, const nlohmann::ordered_json& j, std::size_t depth);

// Appends a member of an object at `depth`: its separator from the member before (none when
// `first`), its key (`key`: already printed, quotes included) and its value.
void append_json_member(std::string& out, bool first, const std::string& key, const nlohmann::ordered_json& value,
                        std::size_t depth);

// Writes ",\n \"key\": [...]" with `count` elements, each the text `element` appends (at depth 2),
// to `out` in chunks.
void write_json_list(std::ostream& out, const std::string& key, std::size_t count,
                     const std::function<void(std::size_t, std::string&)>& element);

}  // namespace kscope::detail
