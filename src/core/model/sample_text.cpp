#include "core/model/sample_text.hpp"

#include <utility>

namespace kscope::detail {
namespace {

// Past this many distinct values of a part, its texts are not kept (a store of run conditions
// that all differ, say): they are made for each sample instead. Runs: their texts are short to
// make, and a config's runs can be millions.
constexpr std::size_t kMostKept = std::size_t(1) << 16, kMostRunsKept = std::size_t(1) << 10;

}  // namespace

SampleText::SampleText(std::vector<Column> columns, std::string row_begin, std::string row_end)
    : row_begin_(std::move(row_begin)), row_end_(std::move(row_end)) {
  for (auto& column : columns) {
    if (segments_.empty() || segments_.back().part != column.part) segments_.push_back({column.part, {}, {}, {}});
    segments_.back().columns.push_back(std::move(column));
  }
}

void SampleText::fill(SamplePart part, const SampleStore& store, std::size_t i) {
  switch (part) {
    case SamplePart::label: {
      const SampleStore::Label& label = store.label(store.label_of(i));
      row_.annotation = store.text(label.annotation);
      row_.metric = store.text(label.metric);
      row_.unit = store.text(label.unit);
      row_.kernel = store.text(label.kernel);
      return;
    }
    case SamplePart::config: row_.config_index = store.config(i); return;
    case SamplePart::run: row_.run = store.run(i); return;
    case SamplePart::value: row_.value = store.value(i); return;
    case SamplePart::conditions: {
      const SampleStore::Conditions& c = store.conditions(store.conditions_of(i));
      row_.sm_clock_mhz = c.sm_clock_mhz;
      row_.memory_clock_mhz = c.memory_clock_mhz;
      row_.throttled = c.throttled;
      row_.other_process = c.other_process;
      row_.overlap_ns = c.overlap_ns;
      row_.host_gap_ns = c.host_gap_ns;
      return;
    }
    case SamplePart::info: row_.info = store.info(store.info_of(i)); return;
    case SamplePart::session: return;
    case SamplePart::row: row_ = store.row(i); return;
  }
}

void SampleText::write(Segment& segment, const SessionInfo& session, std::string& out) const {
  for (const Column& column : segment.columns) column.write(row_, session, out);
}

void SampleText::append(const SampleStore& store, std::size_t i, const SessionInfo& session, std::string& out) {
  out += row_begin_;
  for (Segment& segment : segments_) {
    std::size_t key = 0;
    bool dense = true;
    switch (segment.part) {
      case SamplePart::label: key = store.label_of(i); break;
      case SamplePart::conditions: key = store.conditions_of(i); break;
      case SamplePart::info: key = store.info_of(i); break;
      case SamplePart::run: key = store.run(i); break;
      case SamplePart::config: key = store.config(i), dense = false; break;
      case SamplePart::session: key = reinterpret_cast<std::size_t>(&session), dense = false; break;
      case SamplePart::value:
      case SamplePart::row:
        fill(segment.part, store, i);
        write(segment, session, out);
        continue;
    }
    if (dense && key < (segment.part == SamplePart::run ? kMostRunsKept : kMostKept)) {
      if (key >= segment.made.size()) {
        segment.made.resize(key + 1, false);
        segment.texts.resize(key + 1);
      }
      if (!segment.made[key]) {
        fill(segment.part, store, i);
        write(segment, session, segment.texts[key]);
        segment.made[key] = true;
      }
      out += segment.texts[key];
      continue;
    }
    if (key != segment.last_key || segment.last_text.empty()) {
      fill(segment.part, store, i);
      segment.last_text.clear();
      write(segment, session, segment.last_text);
      segment.last_key = key;
    }
    out += segment.last_text;
  }
  out += row_end_;
}

}  // namespace kscope::detail
