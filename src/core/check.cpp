#include "core/check.hpp"

#include <mpi.h>

namespace a2av {

void mpi_failed(int rc, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  text[length] = '\0';
  fail(A2AV_ERR_MPI, "{} failed: {}", what, text);
}

}  // namespace a2av
