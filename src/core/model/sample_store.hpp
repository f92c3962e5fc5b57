#pragma once
// The raw samples of a sweep, stored by column: 24 bytes a sample (its value, config, run, and two
// ids), whatever its strings. What many samples share is kept once: the texts (annotation, metric,
// unit, kernel), each distinct label (those four together), each distinct run condition (observed
// clocks, throttled) and each distinct row of info collector cells. Samples are only appended;
// kscope::Samples is a view of the first n of them, so Results share the store of the sweep that
// measured them instead of copying it.
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kscope/results.hpp"

namespace kscope::detail {

// The part of a sample a table column shows. Writers of many samples make a column's text once
// per distinct value of its part (the store keeps the parts apart), and a column's cell reads only
// its part of the row; `row` (the default) reads anything and is made for every sample.
enum class SamplePart { row, label, config, run, value, conditions, info, session };

class SampleStore {
 public:
  using Id = std::uint32_t;

  // What a sample's strings say. `series` stands for (annotation, metric): the samples of one
  // series and config make one summary row.
  struct Label {
    Id annotation, metric, unit, kernel;
    Id series;
  };
  // How the GPU ran during the sample's run (and its region's kernels among themselves).
  struct Conditions {
    double sm_clock_mhz, memory_clock_mhz;
    bool throttled;
    bool other_process = false;
    double overlap_ns = NAN;
    double host_gap_ns = NAN;
  };

  Id text_id(std::string_view text);
  Id label_id(Id annotation, Id metric, Id unit, Id kernel);
  Id conditions_id(const Conditions& conditions);
  // Id 0 is the empty row (no info collectors); a row equal to the last one added gets its id.
  Id info_id(const std::vector<Cell>& cells);

  // Throws Error when config or run does not fit the store (4 billion).
  void append(double value, std::size_t config, std::size_t run, Id label, Id conditions, Id info);
  void append(const SampleRow& row);
  // Drops the samples from `count` on (a resumed config whose records turn out incomplete): only
  // samples that no kscope::Samples view holds. What they interned stays.
  void truncate(std::size_t count);

  std::size_t size() const { return records_.size(); }
  double value(std::size_t i) const { return records_[i].value; }
  std::size_t config(std::size_t i) const { return records_[i].config; }
  std::size_t run(std::size_t i) const { return records_[i].run; }
  Id label_of(std::size_t i) const { return records_[i].label; }
  Id conditions_of(std::size_t i) const { return records_[i].conditions; }
  Id info_of(std::size_t i) const { return infos_.empty() ? 0 : infos_[i]; }

  const std::string& text(Id id) const { return texts_[id]; }
  const Label& label(Id id) const { return labels_[id]; }
  const Conditions& conditions(Id id) const { return conditions_[id]; }
  const std::vector<Cell>& info(Id id) const { return info_rows_[id]; }
  std::size_t info_count() const { return info_rows_.size(); }
  std::size_t series_count() const { return series_.size(); }

  SampleRow row(std::size_t i) const;

  // Copies sample i of another store, its strings and cells interned here.
  class Copier {
   public:
    Copier(const SampleStore& from, SampleStore& to) : from_(from), to_(to) {}
    void copy(std::size_t i);

   private:
    Id text(Id id);
    const SampleStore& from_;
    SampleStore& to_;
    std::vector<Id> texts_, labels_, conditions_, infos_;  // id in `from` -> id + 1 in `to`; 0: not yet
  };

 private:
  struct Record {
    double value;
    std::uint32_t config, run;
    Id label, conditions;
  };
  using Key = std::pair<std::uint64_t, std::uint64_t>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return std::hash<std::uint64_t>()(k.first * 0x9E3779B97F4A7C15ULL ^ k.second); }
  };

  std::deque<Record> records_;  // a deque: growing never copies the samples already held
  std::deque<Id> infos_;        // per sample; empty while every sample's is 0

  std::deque<std::string> texts_;  // a deque: the views in text_ids_ stay valid
  std::unordered_map<std::string_view, Id> text_ids_;
  std::vector<Label> labels_;
  std::unordered_map<Key, Id, KeyHash> label_ids_;
  std::vector<std::pair<Id, Id>> series_;  // (annotation, metric)
  std::unordered_map<std::uint64_t, Id> series_ids_;
  std::vector<Conditions> conditions_;
  std::unordered_multimap<std::uint64_t, Id> conditions_ids_;  // by the fields' hash
  std::vector<std::vector<Cell>> info_rows_{{}};
  std::unordered_multimap<std::size_t, Id> info_ids_;  // by the cells' hash
};

// The first `count` samples of a store by config: config c's are samples[starts[c]] to
// samples[starts[c + 1] - 1], in the order recorded; `configs` lists the configs that have samples,
// in the order of their first ones.
struct ByConfig {
  std::vector<std::uint32_t> samples, starts;
  std::vector<std::size_t> configs;
};
ByConfig by_config(const SampleStore& store, std::size_t count);

}  // namespace kscope::detail
