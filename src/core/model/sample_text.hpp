#pragma once
// Many samples as text, straight from the sample store: the rows of samples.csv and the sample
// objects of results.json. Each column shows one part of a sample (SamplePart), and most parts are
// shared by many samples (a label, a config, a run's clocks, the session), so the text of each run
// of columns that show the same part is made once per distinct value of that part, then copied.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/model/sample_store.hpp"

namespace kscope::detail {

class SampleText {
 public:
  struct Column {
    SamplePart part;
    // Appends the column's text, with its separator from the column before, for a row of which
    // only `part` is filled in.
    std::function<void(const SampleRow& row, const SessionInfo& session, std::string& out)> write;
  };
  // Each sample's text is `row_begin`, its columns' texts, `row_end`.
  SampleText(std::vector<Column> columns, std::string row_begin, std::string row_end);

  // Appends sample i of the store (of a config measured in `session`). The texts made are kept by
  // the store's ids: one SampleText serves one store.
  void append(const SampleStore& store, std::size_t i, const SessionInfo& session, std::string& out);

 private:
  struct Segment {
    SamplePart part;
    std::vector<Column> columns;
    std::vector<std::string> texts;  // by the part's id, for labels, conditions, info rows and runs
    std::vector<bool> made;
    std::size_t last_key = static_cast<std::size_t>(-1);  // configs and sessions: the last one's text
    std::string last_text;
  };
  void fill(SamplePart part, const SampleStore& store, std::size_t i);
  void write(Segment& segment, const SessionInfo& session, std::string& out) const;

  std::vector<Segment> segments_;
  std::string row_begin_, row_end_;
  SampleRow row_{};
};

}  // namespace kscope::detail
