// Timed all-to-all through a2av's C API (TuNA paper, Section VI-A: the FFT's transposes).
#include "exchange.hpp"

#include <a2av/a2av.h>

#include <stdexcept>
#include <utility>

namespace fft {

namespace {
void check(int rc, const char* what) {
  if (rc != A2AV_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + A2AV_Error_string(rc) + ": " +
                             A2AV_Last_error_message());
}
}  // namespace

Exchange::Exchange(std::string algorithm)
    : algorithm_(std::move(algorithm)), inplace_(algorithm_.starts_with("inplace")) {}

void Exchange::out_of_place(const cplx* send, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                            cplx* recv, const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                            MPI_Comm comm) {
  const double t0 = MPI_Wtime();
  check(A2AV_Alltoallv_with(algorithm_.c_str(), send, sendcounts, sdispls, MPI_C_DOUBLE_COMPLEX,
                            recv, recvcounts, rdispls, MPI_C_DOUBLE_COMPLEX, comm),
        "A2AV_Alltoallv_with");
  seconds_ += MPI_Wtime() - t0;
  ran_ = A2AV_Last_algorithm();
}

void Exchange::in_place(cplx* buf, MPI_Count capacity, const MPI_Count* sendcounts, MPI_Comm comm) {
  // "inplace" names the engine's auto selection, which the C API spells NULL.
  const char* spec = algorithm_ == "inplace" ? nullptr : algorithm_.c_str();
  const double t0 = MPI_Wtime();
  check(A2AV_Exchange_inplace(buf, capacity, sendcounts, nullptr, MPI_C_DOUBLE_COMPLEX, comm, spec),
        "A2AV_Exchange_inplace");
  seconds_ += MPI_Wtime() - t0;
  ran_ = A2AV_Last_algorithm();
}

}  // namespace fft
