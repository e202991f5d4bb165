// The dense fallback: an MPI_Alltoall of per-destination byte counts, then a2av's own
// alltoallv (its selection: TuNA, shared memory, ...) of the messages packed by destination,
// each behind its 8-byte length. O(P) arrays and log P latencies at least, but for dense
// patterns nothing beats the dense algorithms. A rank at fault sends -code as every count, so
// every rank learns of it from the same all-to-all and they agree without another collective;
// the same all-to-all carries auto's statistics.
// Memory: at most eight arrays of P 64-bit values at once (counts and the all-to-all's blocks,
// then counts, displacements and cursors), the packed messages sent and received, and the
// alltoallv's own temporaries.
#include "sparse/sparse.hpp"

#include "core/check.hpp"
#include "driver/alltoallv.hpp"

#include <algorithm>
#include <cstring>

namespace a2av {
namespace {

constexpr std::int64_t kLengthBytes = sizeof(std::int64_t);

std::vector<MPI_Aint> displacements(const std::vector<MPI_Count>& counts) {
  std::vector<MPI_Aint> out(counts.size());
  MPI_Aint total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) out[i] = total, total += counts[i];
  return out;
}

// The all-to-all of counts, each behind this rank's statistics, so that every rank also
// learns every rank's and agrees on their maxima.
void exchange_counts(const std::vector<MPI_Count>& sendcounts, std::vector<MPI_Count>& recvcounts,
                     const SparseContext& at) {
  const std::size_t size = sendcounts.size();
  std::vector<std::int64_t> out(3 * size), in(3 * size);
  for (std::size_t r = 0; r < size; ++r)
    out[3 * r] = sendcounts[r], out[3 * r + 1] = at.local.messages, out[3 * r + 2] = at.local.bytes;
  check_mpi(MPI_Alltoall(out.data(), 3, MPI_INT64_T, in.data(), 3, MPI_INT64_T, at.ctx.comm),
            "MPI_Alltoall");
  Statistics agreed;
  for (std::size_t r = 0; r < size; ++r) {
    recvcounts[r] = in[3 * r];
    agreed.messages = std::max(agreed.messages, in[3 * r + 1]);
    agreed.bytes = std::max(agreed.bytes, in[3 * r + 2]);
  }
  at.agreed = agreed;
}

}  // namespace

Fault dense_exchange(const std::vector<Parcel>& parcels, const SparseContext& at,
                     const Fault& local, Inbox& inbox) {
  const CommContext& ctx = at.ctx;
  MemoryTracker& memory = at.memory;
  const auto size = static_cast<std::size_t>(ctx.size);
  std::vector<MPI_Count> sendcounts(size, local ? -local.code : 0), recvcounts(size);
  if (!local)
    for (const Parcel& p : parcels) sendcounts[p.destination] += kLengthBytes + p.bytes;
  const auto arrays = static_cast<std::int64_t>(8 * size * sizeof(std::int64_t));
  memory.allocate(arrays);
  exchange_counts(sendcounts, recvcounts, at);
  Fault fault;
  for (std::size_t r = 0; r < size; ++r)
    if (recvcounts[r] < 0 && -recvcounts[r] > fault.code)
      fault = {static_cast<int>(-recvcounts[r]), static_cast<int>(r), {}};
  if (fault) {
    memory.release(arrays);
    if (fault.rank == ctx.rank) fault.message = local.message;
    return fault;
  }
  const std::vector<MPI_Aint> sdispls = displacements(sendcounts),
                              rdispls = displacements(recvcounts);
  TempBuffer packed(memory, sdispls.back() + sendcounts.back());
  TempBuffer received(memory, rdispls.back() + recvcounts.back());
  std::vector<MPI_Aint> cursor = sdispls;
  for (const Parcel& p : parcels) {
    std::byte* at = packed.data() + cursor[p.destination];
    std::memcpy(at, &p.bytes, kLengthBytes);
    if (p.bytes) std::memcpy(at + kLengthBytes, p.data, p.bytes);
    cursor[p.destination] += kLengthBytes + p.bytes;
  }
  const Call call{packed.data(),     sendcounts.data(), sdispls.data(), MPI_BYTE, received.data(),
                  recvcounts.data(), rdispls.data(),    MPI_BYTE,       at.comm};
  const CallResult result = run_alltoallv(call, "", false);
  memory.allocate(result.peak_temp_bytes);  // its peak, on top of what is held here
  memory.release(result.peak_temp_bytes);
  for (std::size_t r = 0; r < size; ++r)
    for (MPI_Aint at = rdispls[r]; at < rdispls[r] + recvcounts[r];) {
      std::int64_t bytes = 0;
      std::memcpy(&bytes, received.data() + at, kLengthBytes);
      inbox.add(static_cast<int>(r),
                {received.data() + at + kLengthBytes, static_cast<std::size_t>(bytes)});
      at += kLengthBytes + bytes;
    }
  memory.release(arrays);
  return fault;
}

}  // namespace a2av
