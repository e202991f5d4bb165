// Waiting for another rank of the node through shared memory: spin while every rank has a
// core of its own, give the core away when they share.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace a2av {

// More ranks on the node than cores: a waiting rank should yield at once instead of spinning.
inline bool oversubscribed(int ranks_on_node) {
  static const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 && ranks_on_node > cores;
}

// A flag in shared memory that one rank publishes (release) and another reads (acquire).
inline std::uint64_t load_acquire(const std::uint64_t& flag) {
  auto& field = const_cast<std::uint64_t&>(flag);  // atomic_ref<const T>: C++26
  return std::atomic_ref<std::uint64_t>(field).load(std::memory_order_acquire);
}
inline void store_release(std::uint64_t& flag, std::uint64_t value) {
  std::atomic_ref<std::uint64_t>(flag).store(value, std::memory_order_release);
}

// One turn of a spin loop, kind to a sibling hyper-thread.
inline void pause_briefly() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace a2av
