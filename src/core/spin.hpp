// Waiting for another rank of the node through shared memory: spin while every rank has a
// core of its own, give the core away when they share.
//
// Under SimGrid SMPI (A2AV_SIMULATION) every rank is an actor on the simulator's one thread
// and runs until it calls into the simulator: a waiting rank must hand over control, and each
// look at a flag costs simulated time, one poll of a cache line another core wrote.
#pragma once

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace a2av {

#ifdef A2AV_SIMULATION
// Simulated time of one look at a flag (A2AV_SIM_POLL_NANOSECONDS): what a spin loop's turn costs.
double simulated_poll_seconds();

// Simulated time for copies through shared memory (core/node_segment.cpp), charged in lumps
// of at least a poll's: one simulated execution for a walk over many small blocks, not one
// (an event for SimGrid's solver) per block.
void charge_copy(std::size_t bytes);
// Charges one look at a flag and the copies not charged yet.
void simulated_poll();
#endif

// More ranks on the node than cores: a waiting rank should yield at once instead of spinning.
// A simulated host has a core per rank (the platforms' `core` attribute).
inline bool oversubscribed([[maybe_unused]] int ranks_on_node) {
#ifdef A2AV_SIMULATION
  return false;
#else
  static const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 && ranks_on_node > cores;
#endif
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
#ifdef A2AV_SIMULATION
  simulated_poll();
#elif defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Gives the core to another rank of the host (ranks outnumber cores).
inline void yield_core() {
#ifdef A2AV_SIMULATION
  simulated_poll();
#else
  sched_yield();
#endif
}

}  // namespace a2av
