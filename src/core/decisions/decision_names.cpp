// The names of the decisions' enumerations (kscope/detail/enum_names.hpp): a comparison's gate, an
// evaluation's verdicts and sides, a race's outcomes. They are named
// in their room, as each room's enumerations are.
#include "kscope/compare.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/evaluate.hpp"
#include "kscope/tune.hpp"

namespace kscope::detail {

std::span<const EnumName<Gate>> enum_names(Gate) {
  static constexpr EnumName<Gate> names[] = {
      {Gate::passed, "passed"}, {Gate::slower, "slower"}, {Gate::cannot_judge, "cannot_judge"}};
  return names;
}

std::span<const EnumName<EvaluationVerdict>> enum_names(EvaluationVerdict) {
  using V = EvaluationVerdict;
  static constexpr EnumName<V> names[] = {{V::faster, "faster"},
                                          {V::slower, "slower"},
                                          {V::same, "same"},
                                          {V::incorrect, "incorrect"},
                                          {V::suspect, "suspect"}};
  return names;
}

std::span<const EnumName<Side>> enum_names(Side) {
  static constexpr EnumName<Side> names[] = {{Side::candidate, "candidate"}, {Side::reference, "reference"}};
  return names;
}

std::span<const EnumName<RaceOutcome>> enum_names(RaceOutcome) {
  using O = RaceOutcome;
  static constexpr EnumName<O> names[] = {{O::winner, "winner"},
                                          {O::tied, "tied"},
                                          {O::slower, "slower"},
                                          {O::eliminated, "eliminated"},
                                          {O::left_out, "left_out"}};
  return names;
}

}  // namespace kscope::detail
