// One all-to-all of complex values through a2av's public C API, timed. An algorithm whose
// name starts with "inplace" runs the in-place engine (A2AV_Exchange_inplace: one buffer,
// for when memory is short; "inplace" alone is its auto selection); any other spec runs
// A2AV_Alltoallv_with out of place ("vendor" is the MPI library's own MPI_Alltoallv).
#pragma once

#include "layout.hpp"

#include <mpi.h>

#include <string>

namespace fft {

class Exchange {
 public:
  explicit Exchange(std::string algorithm);

  bool inplace() const { return inplace_; }
  const std::string& algorithm() const { return algorithm_; }
  // What the last call ran, as a2av reports it (auto's choice, parameters resolved).
  const std::string& ran() const { return ran_; }

  void out_of_place(const cplx* send, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                    cplx* recv, const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                    MPI_Comm comm);
  // buf holds `capacity` elements; the blocks for ranks 0..Q-1 lie back to back.
  void in_place(cplx* buf, MPI_Count capacity, const MPI_Count* sendcounts, MPI_Comm comm);

  // Seconds spent inside a2av calls since the last reset.
  double seconds() const { return seconds_; }
  void reset() { seconds_ = 0; }

 private:
  std::string algorithm_;
  std::string ran_ = "-";  // "-": no exchange yet (one rank transposes locally)
  bool inplace_;
  double seconds_ = 0;
};

}  // namespace fft
