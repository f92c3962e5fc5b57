// The backend registry (kscope/backend_registry.hpp) and Backend's names.
#include "kscope/backend_registry.hpp"

#include <deque>
#include <mutex>
#include <ostream>

#include "core/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope {

class BackendRegistry {
 public:
  static BackendRegistry& instance() {
    static BackendRegistry registry;
    return registry;
  }

  Backend add(BackendDefinition definition) {
    const std::lock_guard lock(mutex_);
    if (definition.name.empty()) throw ConfigError("register_backend(): the backend needs a name");
    for (const auto& d : definitions_) {
      if (d.name == definition.name)
        throw ConfigError("register_backend(): a backend named '" + d.name + "' is registered already");
      if (!definition.python_name.empty() && d.python_name == definition.python_name)
        throw ConfigError("register_backend(): the Python name '" + d.python_name + "' is taken by backend '" +
                          d.name + "'");
    }
    if (definition.capabilities.measures_duration && definition.default_metrics.size() != 1)
      throw ConfigError("register_backend(): backend '" + definition.name + "' measures a duration of its own: give "
                        "it as its one default metric");
    // A deque never moves its elements, so the Backend below may view the stored name.
    definitions_.push_back(std::move(definition));
    return Backend(definitions_.back().name);
  }

  const BackendDefinition* find(std::string_view name) const {
    const std::lock_guard lock(mutex_);
    for (const auto& d : definitions_)
      if (d.name == name) return &d;
    return nullptr;
  }

  std::vector<Backend> all() const {
    const std::lock_guard lock(mutex_);
    std::vector<Backend> out;
    for (const auto& d : definitions_) out.push_back(Backend(d.name));
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::deque<BackendDefinition> definitions_;
};

Backend Backend::named(std::string_view name) {
  if (const BackendDefinition* d = BackendRegistry::instance().find(name)) return Backend(d->name);
  std::vector<std::string> names;
  for (const Backend b : BackendRegistry::instance().all()) names.push_back(to_string(b));
  throw ConfigError("no backend is named '" + std::string(name) + "': the registered ones are " +
                    detail::quoted_list(names));
}

std::string to_string(Backend backend) { return std::string(backend.name()); }

std::ostream& operator<<(std::ostream& out, Backend backend) { return out << backend.name(); }

Backend register_backend(BackendDefinition definition) { return BackendRegistry::instance().add(std::move(definition)); }

std::vector<Backend> registered_backends() { return BackendRegistry::instance().all(); }

const BackendDefinition& definition(Backend backend) {
  if (const BackendDefinition* d = BackendRegistry::instance().find(backend.name())) return *d;
  throw InternalError("backend '" + to_string(backend) + "' is not registered: link kscope::kscope, whose library "
                      "registers kscope's backends");
}

std::vector<std::string> default_metrics(Backend backend) { return definition(backend).default_metrics; }

}  // namespace kscope
