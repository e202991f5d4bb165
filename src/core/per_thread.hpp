// Per-thread state reached through one initial-exec TLS pointer. A plain thread_local in a
// shared library is reached through __tls_get_addr, which costs a few cache misses when
// cold, and a small exchange is made of such costs. The pointer takes 8 bytes of static
// TLS (which a dlopen'ed library may use); the state itself lives on the heap and is freed
// when the thread exits.
//
// Under SimGrid SMPI (A2AV_SIMULATION) every rank is an actor on the simulator's one thread,
// with its own copy of the program (dlopen privatization): state per rank is a plain static
// there, and initial-exec TLS would not fit thousands of copies.
#pragma once

#include <memory>

#ifdef A2AV_SIMULATION
#define A2AV_THREAD_LOCAL static
#else
#define A2AV_THREAD_LOCAL thread_local
#endif

namespace a2av {

template <class T>
T& per_thread() {
#ifdef A2AV_SIMULATION
  static T object;
  return object;
#else
  static thread_local T* fast __attribute__((tls_model("initial-exec"))) = nullptr;
  if (fast) [[likely]]
    return *fast;
  struct Owner {
    std::unique_ptr<T> object = std::make_unique<T>();
    ~Owner() { fast = nullptr; }
  };
  thread_local Owner owner;  // made once per thread, on the first call
  fast = owner.object.get();
  return *fast;
#endif
}

}  // namespace a2av
