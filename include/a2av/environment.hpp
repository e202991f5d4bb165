// The environment variables a2av reads: the table behind `a2av environment` and the README's
// "Environment variables" section.
#pragma once

#include <string>
#include <vector>

namespace a2av {

struct EnvironmentVariable {
  std::string name;           // "A2AV_MAX_MESSAGE"
  std::string type;           // "flag", "integer 64..1073741824", "number", "string", "path"
  std::string default_value;  // what an unset variable means; "" for a path: none
  std::string doc;            // one line
};

// Every variable, in the order of the library's table (src/core/environment.hpp).
std::vector<EnvironmentVariable> environment_variables();

}  // namespace a2av
