// CLI11 for every file of the tool. SimGrid's smpicxx force-includes a header that defines
// exit(x) as a macro (so that a simulated rank's exit ends only that rank), which breaks
// CLI11's App::exit; the tool itself never calls exit.
#pragma once

#ifdef A2AV_SIMULATION
#undef exit
#endif
#include <CLI/CLI.hpp>
