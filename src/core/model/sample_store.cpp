#include "core/model/sample_store.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

#include "kscope/errors.hpp"

namespace kscope {
namespace detail {
namespace {

constexpr std::size_t kMaxIndex = std::numeric_limits<std::uint32_t>::max();

SampleStore::Id next_id(std::size_t count, const char* what) {
  if (count >= kMaxIndex) throw Error(std::string("more than 4294967295 distinct ") + what + " in one result");
  return static_cast<SampleStore::Id>(count);
}

}  // namespace

SampleStore::Id SampleStore::text_id(std::string_view text) {
  if (const auto found = text_ids_.find(text); found != text_ids_.end()) return found->second;
  const Id id = next_id(texts_.size(), "texts");
  texts_.emplace_back(text);
  text_ids_.emplace(texts_.back(), id);
  return id;
}

SampleStore::Id SampleStore::label_id(Id annotation, Id metric, Id unit, Id kernel) {
  const Key key{std::uint64_t{annotation} << 32 | metric, std::uint64_t{unit} << 32 | kernel};
  if (const auto found = label_ids_.find(key); found != label_ids_.end()) return found->second;
  const std::uint64_t series_key = key.first;
  auto series = series_ids_.find(series_key);
  if (series == series_ids_.end()) {
    series = series_ids_.emplace(series_key, next_id(series_.size(), "series")).first;
    series_.emplace_back(annotation, metric);
  }
  const Id id = next_id(labels_.size(), "labels");
  labels_.push_back({annotation, metric, unit, kernel, series->second});
  label_ids_.emplace(key, id);
  return id;
}

SampleStore::Id SampleStore::conditions_id(const Conditions& c) {
  // By their bits: NaN clocks and overlaps (unknown) are one value here.
  const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  const auto same = [&](const Conditions& a) {
    return bits(a.sm_clock_mhz) == bits(c.sm_clock_mhz) && bits(a.memory_clock_mhz) == bits(c.memory_clock_mhz) &&
           a.throttled == c.throttled && a.other_process == c.other_process && bits(a.overlap_ns) == bits(c.overlap_ns) &&
           bits(a.host_gap_ns) == bits(c.host_gap_ns);
  };
  const std::uint64_t hash = (bits(c.sm_clock_mhz) * 0x9E3779B97F4A7C15ULL ^ bits(c.memory_clock_mhz)) * 31 +
                             bits(c.overlap_ns) * 7 + bits(c.host_gap_ns) * 13 + (c.throttled ? 2 : 0) +
                             (c.other_process ? 1 : 0);
  for (auto [it, end] = conditions_ids_.equal_range(hash); it != end; ++it)
    if (same(conditions_[it->second])) return it->second;
  const Id id = next_id(conditions_.size(), "run conditions");
  conditions_.push_back(c);
  conditions_ids_.emplace(hash, id);
  return id;
}

SampleStore::Id SampleStore::info_id(const std::vector<Cell>& cells) {
  if (cells.empty()) return 0;
  if (cells == info_rows_.back()) return static_cast<Id>(info_rows_.size() - 1);
  // Rows recur out of order (annotation-scope cells alternate with the regions): each is kept once.
  std::size_t hash = cells.size();
  for (const Cell& c : cells) hash = hash * 31 + std::hash<Cell>{}(c);
  for (auto [it, end] = info_ids_.equal_range(hash); it != end; ++it)
    if (info_rows_[it->second] == cells) return it->second;
  const Id id = next_id(info_rows_.size(), "info rows");
  info_rows_.push_back(cells);
  info_ids_.emplace(hash, id);
  return id;
}

void SampleStore::append(double value, std::size_t config, std::size_t run, Id label, Id conditions, Id info) {
  if (config >= kMaxIndex || run >= kMaxIndex)
    throw Error("a sample of config " + std::to_string(config) + ", run " + std::to_string(run) +
                ": kscope holds at most 4294967294 configs and runs");
  records_.push_back({value, static_cast<std::uint32_t>(config), static_cast<std::uint32_t>(run), label, conditions});
  if (info == 0 && infos_.empty()) return;
  infos_.resize(records_.size() - 1, 0);  // the samples before the first with info cells have none
  infos_.push_back(info);
}

void SampleStore::append(const SampleRow& row) {
  // Every field of a SampleRow is stored: one added to it fails to compile here until it is.
  const auto& [annotation, config, run, metric, unit, value, kernel, sm_clock_mhz, memory_clock_mhz, throttled, info,
               other_process, overlap_ns, host_gap_ns] = row;
  const Id label = label_id(text_id(annotation), text_id(metric), text_id(unit), text_id(kernel));
  append(value, config, run, label,
         conditions_id({sm_clock_mhz, memory_clock_mhz, throttled, other_process, overlap_ns, host_gap_ns}),
         info_id(info));
}

void SampleStore::truncate(std::size_t count) {
  if (count < records_.size()) records_.resize(count);
  if (count < infos_.size()) infos_.resize(count);
}

SampleRow SampleStore::row(std::size_t i) const {
  const Record& r = records_[i];
  const Label& l = labels_[r.label];
  const Conditions& c = conditions_[r.conditions];
  return SampleRow{texts_[l.annotation], r.config, r.run, texts_[l.metric], texts_[l.unit], r.value,
                   texts_[l.kernel], c.sm_clock_mhz, c.memory_clock_mhz, c.throttled, info_rows_[info_of(i)],
                   c.other_process, c.overlap_ns, c.host_gap_ns};
}

SampleStore::Id SampleStore::Copier::text(Id id) {
  if (texts_.size() <= id) texts_.resize(id + 1, 0);
  if (!texts_[id]) texts_[id] = to_.text_id(from_.text(id)) + 1;
  return texts_[id] - 1;
}

void SampleStore::Copier::copy(std::size_t i) {
  const auto mapped = [](std::vector<Id>& ids, Id id, auto intern) {
    if (ids.size() <= id) ids.resize(id + 1, 0);
    if (!ids[id]) ids[id] = intern() + 1;
    return ids[id] - 1;
  };
  const Id label = mapped(labels_, from_.label_of(i), [&] {
    const Label& l = from_.label(from_.label_of(i));
    return to_.label_id(text(l.annotation), text(l.metric), text(l.unit), text(l.kernel));
  });
  const Id conditions = mapped(conditions_, from_.conditions_of(i),
                               [&] { return to_.conditions_id(from_.conditions(from_.conditions_of(i))); });
  const Id info = mapped(infos_, from_.info_of(i), [&] { return to_.info_id(from_.info(from_.info_of(i))); });
  to_.append(from_.value(i), from_.config(i), from_.run(i), label, conditions, info);
}

ByConfig by_config(const SampleStore& store, std::size_t count) {
  ByConfig out;
  std::size_t configs = 0;
  for (std::size_t i = 0; i < count; ++i) configs = std::max(configs, store.config(i) + 1);
  out.starts.assign(configs + 1, 0);
  for (std::size_t i = 0; i < count; ++i)
    if (out.starts[store.config(i) + 1]++ == 0) out.configs.push_back(store.config(i));
  for (std::size_t c = 0; c < configs; ++c) out.starts[c + 1] += out.starts[c];
  out.samples.resize(count);
  std::vector<std::uint32_t> next(out.starts.begin(), out.starts.end() - 1);
  for (std::size_t i = 0; i < count; ++i) out.samples[next[store.config(i)]++] = static_cast<std::uint32_t>(i);
  return out;
}

}  // namespace detail

namespace {

const detail::SampleStore& no_samples() {
  static const detail::SampleStore empty;
  return empty;
}

}  // namespace

Samples::Samples(const std::vector<SampleRow>& rows) {
  auto store = std::make_shared<detail::SampleStore>();
  for (const SampleRow& row : rows) store->append(row);
  store_ = std::move(store);
  size_ = rows.size();
}

Samples::Samples(std::shared_ptr<const detail::SampleStore> store, std::size_t count)
    : store_(std::move(store)), size_(count) {}

SampleRow Samples::operator[](std::size_t i) const { return store_->row(i); }

std::size_t Samples::config_index(std::size_t i) const { return store_->config(i); }

SampleRow Samples::at(std::size_t i) const {
  if (i >= size_)
    throw std::out_of_range("sample " + std::to_string(i) + " of " + std::to_string(size_) + " samples");
  return store_->row(i);
}

const detail::SampleStore& Samples::store() const { return store_ ? *store_ : no_samples(); }

SampleRow Samples::iterator::operator*() const { return store_->row(index_); }

}  // namespace kscope
