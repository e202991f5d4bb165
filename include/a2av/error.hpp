// a2av::Error, the exception every C++ entry point throws; the C API turns it into a code.
#pragma once

#include <a2av/a2av.h>

#include <stdexcept>
#include <string>

namespace a2av {

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace a2av
