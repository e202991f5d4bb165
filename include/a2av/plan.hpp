// Persistent exchanges, in the spirit of MPI-4's MPI_Alltoallv_init: what depends only on
// the buffers and counts (argument checks, the agreement across ranks, the choice of
// algorithm, the byte layout and any packing buffers) is done once when the plan is made;
// each run() then only moves the buffers' current contents.
#pragma once

#include <a2av/alltoallv.hpp>

#include <memory>
#include <span>
#include <string>

namespace a2av {

class Plan {
 public:
  // Collective over comm, like alltoallv(); the buffers and counts must stay valid and
  // unchanged (their contents may change) until the plan is destroyed. Throws a2av::Error.
  Plan(const void* sendbuf, std::span<const MPI_Count> sendcounts,
       std::span<const MPI_Aint> sdispls, MPI_Datatype sendtype, void* recvbuf,
       std::span<const MPI_Count> recvcounts, std::span<const MPI_Aint> rdispls,
       MPI_Datatype recvtype, MPI_Comm comm, const Options& options = {});
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  ~Plan();

  // Collective: one exchange; returns when this rank's part is complete. Throws a2av::Error.
  void run();

  std::string algorithm() const;         // the spec that runs, parameters resolved
  std::int64_t peak_temp_bytes() const;  // peak temporary memory of the plan so far

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace a2av
