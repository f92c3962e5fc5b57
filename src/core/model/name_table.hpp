#pragma once
// A process-wide table of entries that a name class stands for (Backend's definitions, StopCriterion's
// rules): added and read under one lock, kept in a deque, whose elements never move, so that a name
// class may view an entry's stored name for the rest of the process.
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {

template <class Entry>
class NameTable {
 public:
  NameTable() = default;
  explicit NameTable(std::deque<Entry> entries) : entries_(std::move(entries)) {}

  // Stores `entry` once `refuse(entries so far, entry)` has let it pass (it throws to refuse it), and
  // returns its stored name.
  template <class Refuse>
  std::string_view add(Entry entry, Refuse refuse) {
    const std::lock_guard lock(mutex_);
    refuse(std::as_const(entries_), std::as_const(entry));
    entries_.push_back(std::move(entry));
    return entries_.back().name;
  }

  const Entry* find(std::string_view name) const {
    const std::lock_guard lock(mutex_);
    for (const Entry& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }

  // Every entry's stored name, in the order they were added.
  std::vector<std::string_view> names() const {
    const std::lock_guard lock(mutex_);
    std::vector<std::string_view> out;
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }

  // The entry of this name; else ConfigError "no <what> is named '<name>': the registered ones are ...".
  const Entry& named(std::string_view what, std::string_view name) const {
    if (const Entry* e = find(name)) return *e;
    std::vector<std::string> listed;
    for (const std::string_view n : names()) listed.emplace_back(n);
    throw ConfigError("no " + std::string(what) + " is named '" + std::string(name) + "': the registered ones are " +
                      quoted_list(listed));
  }

 private:
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
};

}  // namespace kscope::detail
