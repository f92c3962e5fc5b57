#pragma once
// kscope's front ends (the Python module, the kscope program's commands) say who is calling, so
// that messages name options and fixes in the caller's language: a C++ caller reads
// `Settings::runs`, a Python caller `runs`. Public for those front ends, not for programs using
// kscope: a C++ program is the default caller.
namespace kscope::detail {

enum class Caller { cpp, python, command_line };

void set_caller(Caller caller);
Caller caller();

// Sets the caller for as long as it lives (a command of the kscope program, while it runs).
class CallerScope {
 public:
  explicit CallerScope(Caller c) : previous_(caller()) { set_caller(c); }
  ~CallerScope() { set_caller(previous_); }
  CallerScope(const CallerScope&) = delete;
  CallerScope& operator=(const CallerScope&) = delete;

 private:
  Caller previous_;
};

}  // namespace kscope::detail
