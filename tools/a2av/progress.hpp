// A progress line on standard error for long sweeps, rewritten in place; shown on rank 0 only
// and only when standard error is a terminal (or when asked: under mpiexec the ranks' stderr
// is a pipe to the launcher), so logs stay clean.
#pragma once

#include <chrono>
#include <string_view>

namespace a2av::bench {

class Progress {
 public:
  Progress(int rank, bool forced);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Whether a new line is worth formatting now (at most a few per second).
  bool due();
  void show(std::string_view text);

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace a2av::bench
