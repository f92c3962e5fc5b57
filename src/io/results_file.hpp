#pragma once
// What the results file knows about settings, for code that compares saved results; how it prints JSON.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kscope/settings.hpp"

namespace kscope::detail {

// "runs: 10 and 20", one entry per saved setting (those that decide the numbers) that differs
// between `a` and `b`; the shard is not compared.
std::vector<std::string> measurement_differences(const Settings& a, const Settings& b);

// Appends `j` as j.dump(1) prints it `depth` levels deep into a document (invalid UTF-8 replaced),
// without the serializer dump builds for every call: the results file's long lists, an element at
// a time.
void append_json(std::string& out, const nlohmann::ordered_json& j, std::size_t depth);

}  // namespace kscope::detail
