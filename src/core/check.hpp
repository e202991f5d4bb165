// The one place MPI return codes and library errors become a2av::Error.
#pragma once

#include <a2av/error.hpp>

#include <fmt/format.h>

namespace a2av {

// Throws Error(A2AV_ERR_MPI) naming the failed call and MPI's own message.
[[noreturn]] void mpi_failed(int rc, const char* what);

inline void check_mpi(int rc, const char* what) {
  if (rc != 0) [[unlikely]]  // MPI_SUCCESS is 0 by the standard; <mpi.h> is not needed here
    mpi_failed(rc, what);
}

template <class... Args>
[[noreturn]] void fail(int code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace a2av
