#pragma once
// The one entry of the engine's calls that measure a sweep (profile(), tune(), evaluate(), with
// the registry's backend or the caller's): the log scope, what the call does not take, the launch
// settings, the request's checks, the backend the registry chooses by its capabilities and the
// process's one session, written once. Each call's rules are a row of entry_rules(); Python reads
// them (_core.entry_rules) to make tune's and evaluate's signatures from the option table.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/log.hpp"
#include "core/engine/session_guard.hpp"
#include "kscope/backend_registry.hpp"

namespace kscope::detail {

enum class Entry { profile, tune, evaluate };

// An option a call does not take: its Settings field (a key of settings_fields()), whether the
// settings give it, and why the call does without it.
struct RefusedOption {
  std::string field;
  bool (*given)(const Settings&);
  std::string why;
};

// What one entry takes of the Settings and needs of its backend.
struct EntryRules {
  std::string name;                   // "tune": "tune does not take ..."
  std::vector<RefusedOption> refused;
  // Each annotated region timed as one range over all its work, whatever Settings::replay_mode
  // holds: the call sets that field itself.
  bool whole_regions = false;
  // Whether the launcher's environment may place the call (KSCOPE_SHARD, Slurm's restart).
  bool launched = true;
  // What the call needs of the backend, as the registry's capabilities say, and why.
  bool (*can_measure)(const BackendCapabilities&) = nullptr;
  std::string needs;
};

const EntryRules& entry_rules(Entry entry);
// "Backend::cupti (the default) or Backend::events" in the caller's language: the registered
// backends made in this process that can measure what `rules` needs.
std::string backends_for(const EntryRules& rules);

// One call through its entry, from the settings asked for to the session that measures them.
class EntryCall {
 public:
  // Opens the log scope, refuses what the call does not take, resolves the launch settings and
  // checks the request, before anything touches the GPU.
  EntryCall(Entry entry, const Sweep& sweep, const Settings& requested, const Body& body);
  EntryCall(const EntryCall&) = delete;
  EntryCall& operator=(const EntryCall&) = delete;

  const Settings& settings() const { return settings_; }
  const std::vector<Config>& configs() const { return configs_; }
  std::vector<Config> take_configs() { return std::move(configs_); }

  // The registry's backend for these settings; ConfigError when it cannot measure what this call
  // needs, and a duration backend's metrics checked against those asked for.
  const BackendDefinition& chosen() const;
  // The chosen backend made for this call (its definition must have a factory).
  std::unique_ptr<MeasurementBackend> make(const BackendDefinition& chosen) const;
  // Holds the process's one session for the rest of the call.
  void hold_session();
  // Holds the session (if not yet) and checks that `backend` measures what the settings ask for.
  void start(const MeasurementBackend& backend);

 private:
  const EntryRules& rules_;
  LogScope log_;
  Settings settings_;
  std::vector<Config> configs_;
  std::optional<SessionGuard> guard_;
};

}  // namespace kscope::detail
