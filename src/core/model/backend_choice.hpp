#pragma once
// Which backend measures a call (kscope::chosen_backend, declared in kscope/settings.hpp), and how
// messages name a backend= choice in the caller's language.
#include <string>

#include "kscope/settings.hpp"

namespace kscope::detail {

// "Backend::counters" for C++, "backend='counters'" for Python ("backend=None" for from_metrics).
std::string backend_choice(Backend b);
// The backend's name alone: "automatic" for C++, "auto" for Python and the command line.
std::string backend_label(Backend b);

}  // namespace kscope::detail
