// vendor: the MPI library's own MPI_Alltoallv on the user's arguments, unchanged
// (PMPI_Alltoallv under the preload library). Counts beyond int use MPI_Alltoallv_c where
// the MPI library is MPI-4; otherwise they are an A2AV_ERR_ARG.
#include "alltoallv/algorithm.hpp"
#include "core/check.hpp"
#include "core/per_thread.hpp"

#include <climits>
#include <vector>

namespace a2av {
namespace {

VendorAlltoallv vendor_fn = &MPI_Alltoallv;

bool to_int(const auto* values, int n, std::vector<int>& out) {
  out.resize(n);
  for (int i = 0; i < n; ++i) {
    if (values[i] < INT_MIN || values[i] > INT_MAX) return false;
    out[i] = static_cast<int>(values[i]);
  }
  return true;
}

// The int arrays of the MPI call; kept per thread up to kKeptSize ranks (16 KiB), so that a
// call on fewer ranks allocates nothing once warm.
struct IntArrays {
  std::vector<int> sc, sd, rc, rd;
};
constexpr int kKeptSize = 1024;

}  // namespace

void set_vendor_alltoallv(VendorAlltoallv fn) {
  vendor_fn = fn;
}

void run_vendor(const Exchange& ex, const Params&) {
  const Call& c = ex.call;
  const int n = ex.ctx.size;
  IntArrays fresh;
  auto& [sc, sd, rc, rd] = n <= kKeptSize ? per_thread<IntArrays>() : fresh;
  const bool fits = (c.in_place() || (to_int(c.sendcounts, n, sc) && to_int(c.sdispls, n, sd))) &&
                    to_int(c.recvcounts, n, rc) && to_int(c.rdispls, n, rd);
  if (fits) {
    check_mpi(vendor_fn(c.sendbuf, sc.data(), sd.data(), c.sendtype, c.recvbuf, rc.data(),
                        rd.data(), c.recvtype, ex.ctx.comm),
              "MPI_Alltoallv");
    return;
  }
#if MPI_VERSION >= 4
  check_mpi(MPI_Alltoallv_c(c.sendbuf, c.sendcounts, c.sdispls, c.sendtype, c.recvbuf, c.recvcounts,
                            c.rdispls, c.recvtype, ex.ctx.comm),
            "MPI_Alltoallv_c");
#else
  fail(A2AV_ERR_ARG,
       "vendor: counts or displacements exceed int and this MPI (version {}) has no "
       "MPI_Alltoallv_c; use another algorithm",
       MPI_VERSION);
#endif
}

}  // namespace a2av
