#pragma once
// Cells and reals as JSON: the one form of every file kscope writes and reads back (results.json,
// a streamed sweep's manifest.json and progress.jsonl). Strict JSON has no NaN or infinities; here
// they round-trip.
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kscope/table.hpp"

namespace kscope::detail {

// What a non-finite real becomes: kscope's own files keep it; a table written for other tools
// (write_json) has null, as strict JSON readers expect.
enum class NonFinite { kept, null };

// A real whose reader knows it is one: a number, null for NaN, "Infinity" or "-Infinity".
nlohmann::ordered_json real_json(double v);
// A cell of no declared type: null (missing), an integer, a real, a string or a boolean; a
// non-finite real as {"real": "NaN" | "Infinity" | "-Infinity"}, so that it stays a real.
nlohmann::ordered_json cell_json(const Cell& cell, NonFinite non_finite = NonFinite::kept);

// The inverses; nullopt for JSON they never write.
template <typename Json>
std::optional<double> real_from_json(const Json& j) {
  if (j.is_number()) return j.template get<double>();
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (j == "Infinity") return std::numeric_limits<double>::infinity();
  if (j == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

template <typename Json>
std::optional<Cell> cell_from_json(const Json& j) {
  if (j.is_null()) return Cell{};
  if (j.is_boolean()) return Cell{j.template get<bool>()};
  if (j.is_number_unsigned() && j.template get<std::uint64_t>() > std::uint64_t(INT64_MAX)) return std::nullopt;
  if (j.is_number_integer()) return Cell{j.template get<std::int64_t>()};
  if (j.is_number_float()) return Cell{j.template get<double>()};
  if (j.is_string()) return Cell{j.template get<std::string>()};
  if (j.is_object() && j.size() == 1 && j.contains("real")) {
    const Json& real = j.at("real");
    if (real == "NaN") return Cell{std::numeric_limits<double>::quiet_NaN()};
    if (real == "Infinity" || real == "-Infinity") return Cell{*real_from_json(real)};
  }
  return std::nullopt;
}

}  // namespace kscope::detail
