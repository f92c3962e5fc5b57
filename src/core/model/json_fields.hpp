#pragma once
// kscope's own JSON files, field by field: each field of a record listed once with how it is
// written and read back (the results file's records, the settings table of core/settings_fields).
// Reals through core/model/cell_json.hpp; enumerations by name.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/text.hpp"
#include "core/model/cell_json.hpp"
#include "core/model/sample_store.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/errors.hpp"
#include "kscope/info_collector.hpp"
#include "kscope/settings.hpp"
#include "kscope/stopping_rule.hpp"

namespace kscope::detail::json_fields {

using Written = nlohmann::ordered_json;  // keeps the fields in their listed order
using Read = nlohmann::json;

[[noreturn]] inline void bad_value(const std::string& where, const char* expected, const Read& got) {
  throw ConfigError(where + " must be " + expected + ", not " + cut(got.dump(-1, ' ', false, Read::error_handler_t::replace)));
}

// ---- Values -------------------------------------------------------------------------------------
// Reals and cells as every file kscope reads back writes them (core/model/cell_json.hpp).

inline Written encode(double v) { return real_json(v); }
inline Written encode(const std::string& v) { return v; }
inline Written encode(std::size_t v) { return v; }
inline Written encode(bool v) { return v; }
inline Written encode(const std::optional<bool>& v) { return v ? Written(*v) : Written(); }
inline Written encode(const std::vector<std::string>& v) { return v; }
inline Written encode(const std::vector<double>& v) {
  Written out = Written::array();
  for (double x : v) out.push_back(encode(x));
  return out;
}

inline void decode(const Read& j, double& out, const std::string& where) {
  const auto real = real_from_json(j);
  if (!real) bad_value(where, "a number, null, \"Infinity\" or \"-Infinity\"", j);
  out = *real;
}
inline void decode(const Read& j, std::string& out, const std::string& where) {
  if (!j.is_string()) bad_value(where, "a string", j);
  out = j.get<std::string>();
}
inline void decode(const Read& j, std::size_t& out, const std::string& where) {
  if (!j.is_number_unsigned()) bad_value(where, "a non-negative integer", j);
  out = j.get<std::size_t>();
}
inline void decode(const Read& j, bool& out, const std::string& where) {
  if (!j.is_boolean()) bad_value(where, "true or false", j);
  out = j.get<bool>();
}
inline void decode(const Read& j, std::optional<bool>& out, const std::string& where) {
  if (!j.is_boolean() && !j.is_null()) bad_value(where, "true, false or null", j);
  out = j.is_null() ? std::nullopt : std::optional<bool>(j.get<bool>());
}
inline void decode(const Read& j, std::vector<std::string>& out, const std::string& where) {
  if (!j.is_array()) bad_value(where, "a list of strings", j);
  out.clear();
  for (const Read& item : j) {
    if (!item.is_string()) bad_value(where, "a list of strings", j);
    out.push_back(item.get<std::string>());
  }
}

inline void decode(const Read& j, std::vector<double>& out, const std::string& where) {
  if (!j.is_array()) bad_value(where, "a list of numbers", j);
  out.assign(j.size(), 0.0);
  for (std::size_t i = 0; i < j.size(); ++i) decode(j[i], out[i], where);
}

// ---- Enumerations, by name ---------------------------------------------------------------------

template <typename E>
using Names = std::vector<std::pair<E, std::string>>;

// Backends and stopping rules by their registered names, which a program may extend: read at each use.
template <typename Registered>
Names<Registered> registered_names(const std::vector<Registered>& registered) {
  Names<Registered> n;
  for (const Registered r : registered) n.emplace_back(r, to_string(r));
  return n;
}
inline Names<Backend> names(Backend) { return registered_names(registered_backends()); }
inline Names<StopCriterion> names(StopCriterion) { return registered_names(registered_stopping_rules()); }
// The other enumerations by their one table of names (kscope/detail/enum_names.hpp).
template <typename E>
  requires requires(E v) { enum_names(v); }
Names<E> names(E v) {
  Names<E> n;
  for (const auto& [value, name] : enum_names(v)) n.emplace_back(value, name);
  return n;
}

template <typename E>
  requires requires(E v) { names(v); }
Written encode(E v) {
  for (const auto& [value, name] : names(v))
    if (value == v) return name;
  throw InternalError("an enumerator without a name in the results file (kscope bug: please report it)");
}

template <typename E>
  requires requires(E v) { names(v); }
void decode(const Read& j, E& out, const std::string& where) {
  std::string listed;
  for (const auto& [value, name] : names(out)) {
    if (j == name) {
      out = value;
      return;
    }
    listed += (listed.empty() ? "\"" : " or \"") + name + "\"";
  }
  bad_value(where, listed.c_str(), j);
}

// ---- Fields -------------------------------------------------------------------------------------

template <typename Row>
struct Field {
  std::string key;
  std::function<Written(const Row&)> write;
  std::function<void(Row&, const Read&, const std::string& where)> read;  // empty: written only
  bool optional = false;  // added after the format's first files: absent keeps the default
  SamplePart part = SamplePart::row;  // sample fields: the part of the row written
};

// A field stored as it is: `access` is a generic lambda returning a reference to it.
template <typename Row, typename Access>
Field<Row> field(std::string key, Access access) {
  return {key, [access](const Row& row) { return encode(access(row)); },
          [access](Row& row, const Read& value, const std::string& where) { decode(value, access(row), where); }};
}

// A field added after the format's first files: a file without it loads with the default.
template <typename Row>
Field<Row> added_later(Field<Row> f) {
  f.optional = true;
  return f;
}

template <typename Row>
Written write_object(const Row& row, const std::vector<Field<Row>>& fields) {
  Written object = Written::object();
  for (const auto& f : fields) object[f.key] = f.write(row);
  return object;
}

template <typename Row>
void read_object(const Read& object, Row& row, const std::vector<Field<Row>>& fields, const std::string& where) {
  if (!object.is_object()) bad_value(where, "an object", object);
  for (const auto& f : fields) {
    if (!f.read) continue;
    const auto found = object.find(f.key);
    if (found == object.end() && f.optional) continue;
    if (found == object.end()) throw ConfigError(where + " has no \"" + f.key + "\"");
    f.read(row, *found, where + " \"" + f.key + "\"");
  }
}

inline std::uint64_t read_unsigned(const Read& j, const std::string& where) {
  if (!j.is_number_unsigned()) bad_value(where, "a non-negative integer", j);
  return j.get<std::uint64_t>();
}

// The list of records at section[key], each naming a config (its "Config" field: config_index)
// that must be one of the file's `configs`.
template <typename Row>
std::vector<Row> read_config_rows(const Read& section, const char* key, const std::vector<Field<Row>>& fields,
                                  std::size_t configs, const std::string& where) {
  const auto found = section.find(key);
  if (found == section.end()) throw ConfigError(where + " has no \"" + key + "\"");
  if (!found->is_array()) bad_value(where + " \"" + key + "\"", "a list", *found);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < found->size(); ++i) {
    const std::string at = where + " \"" + key + "\" " + std::to_string(i);
    read_object((*found)[i], rows.emplace_back(), fields, at);
    if (rows.back().config_index >= configs)
      throw ConfigError(at + " \"Config\" is " + std::to_string(rows.back().config_index) + ", but the file lists " +
                        std::to_string(configs) + " configs");
  }
  return rows;
}

// A field holding an object of its own fields.
template <typename Row, typename Inner, typename Access>
Field<Row> nested(std::string key, Access access, std::vector<Field<Inner>> fields) {
  return {key, [access, fields](const Row& row) { return write_object(access(row), fields); },
          [access, fields](Row& row, const Read& value, const std::string& where) {
            read_object(value, access(row), fields, where);
          }};
}

}  // namespace kscope::detail::json_fields
