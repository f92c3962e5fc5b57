// The backend registry (kscope/backend_registry.hpp) and Backend's names.
#include "kscope/backend_registry.hpp"

#include <deque>
#include <ostream>

#include "core/model/registry.hpp"
#include "kscope/errors.hpp"

namespace kscope {

// Makes the Backend values, whose constructor is private to them and this class.
class BackendRegistry {
 public:
  static detail::Registry<BackendDefinition>& registry() {
    static detail::Registry<BackendDefinition> definitions("backend", "register_backend()");
    return definitions;
  }

  static Backend add(BackendDefinition definition) {
    if (definition.name.empty()) throw ConfigError("register_backend(): the backend needs a name");
    if (definition.capabilities.measures_duration && definition.default_metrics.size() != 1)
      throw ConfigError("register_backend(): backend '" + definition.name + "' measures a duration of its own: give "
                        "it as its one default metric");
    const auto refuse = [](const std::deque<BackendDefinition>& definitions, const BackendDefinition& added) {
      for (const auto& d : definitions)
        if (!added.python_name.empty() && d.python_name == added.python_name && d.name != added.name)
          throw ConfigError("register_backend(): the Python name '" + d.python_name + "' is taken by backend '" +
                            d.name + "'");
    };
    return Backend(registry().add(std::move(definition), refuse).name);
  }

  static Backend named(std::string_view name) { return Backend(registry().named(name).name); }

  static std::vector<Backend> all() {
    return registry().names_as([](std::string_view name) { return Backend(name); });
  }
};

Backend Backend::named(std::string_view name) { return BackendRegistry::named(name); }

std::string to_string(Backend backend) { return std::string(backend.name()); }

std::ostream& operator<<(std::ostream& out, Backend backend) { return out << backend.name(); }

Backend register_backend(BackendDefinition definition) { return BackendRegistry::add(std::move(definition)); }

std::vector<Backend> registered_backends() { return BackendRegistry::all(); }

const BackendDefinition& definition(Backend backend) {
  if (const BackendDefinition* d = BackendRegistry::registry().find(backend.name())) return *d;
  throw InternalError("backend '" + to_string(backend) + "' is not registered: link kscope::kscope, whose library "
                      "registers kscope's backends");
}

std::vector<std::string> default_metrics(Backend backend) { return definition(backend).default_metrics; }

}  // namespace kscope
