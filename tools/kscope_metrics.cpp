// kscope-metrics: the counter backend's metrics (the same command as `kscope metrics`).
#include <string>
#include <vector>

#include "command_line.hpp"
#include "metrics_command.hpp"

int main(int argc, char** argv) {
  return kscope::cli::flushed(metrics_command("kscope-metrics", {argv + 1, argv + argc}));
}
