#include "core/model/cell_json.hpp"

#include <type_traits>
#include <variant>

namespace kscope::detail {

using Json = nlohmann::ordered_json;

Json real_json(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

Json cell_json(const Cell& cell, NonFinite non_finite) {
  if (const double* v = std::get_if<double>(&cell); v && !std::isfinite(*v)) {
    if (non_finite == NonFinite::null) return nullptr;
    return Json{{"real", std::isnan(*v) ? Json("NaN") : real_json(*v)}};
  }
  return std::visit(
      [](const auto& v) -> Json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) return nullptr;
        else return v;
      },
      cell);
}

}  // namespace kscope::detail
