// Settings from A2AV_* environment variables, read once per process: a call must not pay
// for getenv. Every variable is documented in the README.
#pragma once

#include <cstdlib>
#include <cstring>

namespace a2av {

// Set, and neither empty nor "0".
inline bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
}

// A2AV_VERBOSE: rank 0 says what auto chose and why, and what shared memory it set up.
inline bool verbose() {
  static const bool on = env_flag("A2AV_VERBOSE");
  return on;
}

}  // namespace a2av
