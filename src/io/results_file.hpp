#pragma once
// How the results file prints JSON.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace kscope::detail {

// Appends `j` as j.dump(1) prints it `depth` levels deep into a document (invalid UTF-8 replaced),
// without the serializer dump builds for every call: the results file's long lists, an element at
// a time.
void append_json(std::string& out, const nlohmann::ordered_json& j, std::size_t depth);

}  // namespace kscope::detail
