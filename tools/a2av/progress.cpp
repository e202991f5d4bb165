#include "progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

namespace a2av::bench {
namespace {
constexpr auto kInterval = std::chrono::milliseconds(200);
}

Progress::Progress(int rank, bool forced)
    : enabled_(rank == 0 && (forced || isatty(STDERR_FILENO))) {}

Progress::~Progress() {
  if (shown_) fmt::print(stderr, "\r\033[K");  // leave no stale line above the report
}

bool Progress::due() {
  if (!enabled_) return false;
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < kInterval) return false;
  last_ = now;
  return true;
}

void Progress::show(std::string_view text) {
  fmt::print(stderr, "\r\033[K{}", text);
  std::fflush(stderr);
  shown_ = true;
}

}  // namespace a2av::bench
