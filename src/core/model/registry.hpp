#pragma once
// Every registry of kscope is one of these (docs/architecture.md, "Registries"): the backends, the
// stopping rules, the summary statistics and the output formats. kscope's own entries come first,
// then those a program adds; an entry is known by its name, never removed, and added and read under
// one lock. Entries live in a deque, whose elements never move, so that a name class (Backend,
// StopCriterion) may view an entry's stored name for the rest of the process.
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {

// `name_member`: the entry's member that holds its name (a std::string, or a C string for a table of
// literals).
template <class Entry, auto name_member = &Entry::name>
class Registry {
 public:
  // `what`: an entry as messages name it ("backend"); `adder`: the function that registers one
  // ("register_backend()"); `own`: kscope's own entries, in order.
  Registry(std::string what, std::string adder, std::deque<Entry> own = {})
      : what_(std::move(what)), adder_(std::move(adder)), entries_(std::move(own)) {}

  static std::string_view name_of(const Entry& entry) { return entry.*name_member; }

  // Stores `entry` once `refuse(entries so far, entry)` has let it pass (it throws ConfigError
  // naming the fix; it runs under the lock, so it reads no registry) and no entry has its name;
  // returns the stored entry. The adder checks what needs no other entry before.
  template <class Refuse = void (*)(const std::deque<Entry>&, const Entry&)>
  const Entry& add(Entry entry, Refuse refuse = [](const std::deque<Entry>&, const Entry&) {}) {
    const std::lock_guard lock(mutex_);
    refuse(std::as_const(entries_), std::as_const(entry));
    if (const Entry* taken = find_locked(name_of(entry)))
      throw ConfigError(adder_ + ": a " + what_ + " named '" + std::string(name_of(*taken)) +
                        "' is registered already; choose another name");
    entries_.push_back(std::move(entry));
    return entries_.back();
  }

  const Entry* find(std::string_view name) const {
    const std::lock_guard lock(mutex_);
    return find_locked(name);
  }

  // The entry of this name; else ConfigError "no <what> is named '<name>': the registered ones are ...".
  const Entry& named(std::string_view name) const {
    if (const Entry* e = find(name)) return *e;
    std::vector<std::string> listed;
    for (const std::string_view n : names()) listed.emplace_back(n);
    throw ConfigError("no " + what_ + " is named '" + std::string(name) + "': the registered ones are " +
                      quoted_list(listed));
  }

  // Every entry's stored name, in the order they were added.
  std::vector<std::string_view> names() const {
    const std::lock_guard lock(mutex_);
    std::vector<std::string_view> out;
    for (const Entry& e : entries_) out.push_back(name_of(e));
    return out;
  }

  // Every entry's name as `make(name)` makes it (a name class: Backend, StopCriterion), in the order
  // they were added.
  template <class Make>
  auto names_as(Make make) const {
    std::vector<decltype(make(std::string_view{}))> out;
    for (const std::string_view name : names()) out.push_back(make(name));
    return out;
  }

  // A copy of every entry, in the order they were added: its reader needs no lock while a program
  // registers another.
  std::vector<Entry> entries() const {
    const std::lock_guard lock(mutex_);
    return {entries_.begin(), entries_.end()};
  }

  std::size_t size() const {
    const std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  const Entry* find_locked(std::string_view name) const {
    for (const Entry& e : entries_)
      if (name_of(e) == name) return &e;
    return nullptr;
  }

  const std::string what_;
  const std::string adder_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
};

}  // namespace kscope::detail
