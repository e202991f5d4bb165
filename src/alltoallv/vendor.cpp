// vendor: the MPI library's own MPI_Alltoallv on the user's arguments, unchanged
// (PMPI_Alltoallv under the preload library). Counts beyond int use MPI_Alltoallv_c where
// the MPI library is MPI-4; otherwise they are an A2AV_ERR_ARG.
#include "alltoallv/registry.hpp"
#include "core/check.hpp"
#include "core/per_thread.hpp"

#include <atomic>
#include <climits>
#include <vector>

namespace a2av {
namespace {

// Set by the preload library from any thread's first call (atomic: others may be reading it).
std::atomic<VendorAlltoallv> vendor_fn{&MPI_Alltoallv};

bool to_int(const auto* values, int n, int* out) {
  for (int i = 0; i < n; ++i) {
    if (values[i] < INT_MIN || values[i] > INT_MAX) return false;
    out[i] = static_cast<int>(values[i]);
  }
  return true;
}

// Kept per thread up to kKeptSize ranks (16 KiB), so that a call on fewer ranks allocates
// nothing once warm.
constexpr int kKeptSize = 1024;

}  // namespace

void set_vendor_alltoallv(VendorAlltoallv fn) {
  vendor_fn.store(fn);
}

bool vendor_int_arrays(const Call& c, int size, std::vector<int>& out) {
  out.resize(4 * static_cast<std::size_t>(size));
  int* at = out.data();
  return (c.in_place() || (to_int(c.sendcounts, size, at) && to_int(c.sdispls, size, at + size))) &&
         to_int(c.recvcounts, size, at + 2 * size) && to_int(c.rdispls, size, at + 3 * size);
}

void run_vendor_on(const Call& c, const std::vector<int>& ints, MPI_Comm comm) {
  const int* at = ints.data();
  const std::size_t size = ints.size() / 4;
  check_mpi(vendor_fn.load()(c.sendbuf, at, at + size, c.sendtype, c.recvbuf, at + 2 * size,
                             at + 3 * size, c.recvtype, comm),
            "MPI_Alltoallv");
}

namespace {

void run_vendor(const AlgorithmCall& ex, const ParamValues&) {
  const Call& c = ex.call;
  std::vector<int> fresh;
  auto& ints = ex.ctx.size <= kKeptSize ? per_thread<std::vector<int>>() : fresh;
  if (vendor_int_arrays(c, ex.ctx.size, ints)) return run_vendor_on(c, ints, ex.ctx.comm);
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

}  // namespace

const AlgorithmDescriptor& vendor_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "vendor",
      .summary = "the MPI library's own MPI_Alltoallv",
      .source = "the MPI standard's MPI_Alltoallv",
      .run = run_vendor,
      .model = {ModelShape::direct},
      .test_specs = {{"vendor"}},
      .intercommunicators = true,
  };
  return d;
}

}  // namespace a2av
