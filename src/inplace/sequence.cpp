#include "inplace/sequence.hpp"

#include "core/check.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <cstring>

namespace a2av::inplace {
namespace {

constexpr int kSlots = 2;
constexpr std::int64_t kMinWindow = 4096;  // elements; smaller ranges use fewer slots

// Packs the real elements of `pieces` (positions relative to `window`) into `out`.
std::int64_t pack_real(const std::byte* window, std::span<const Run> pieces, std::int64_t elem,
                       std::byte* out) {
  std::int64_t pos = 0, packed = 0;
  for (const Run& r : pieces) {
    if (!r.filler) {
      std::memcpy(out + packed, window + pos * elem, static_cast<std::size_t>(r.length * elem));
      packed += r.length * elem;
    }
    pos += r.length;
  }
  return packed;
}

}  // namespace

Runs initial_runs(int rank, const Layout& layout) {
  const std::int64_t c = layout.length;
  const auto p = static_cast<int>(layout.send.size());
  std::int64_t sent_before = 0, send_total = 0;
  for (int d = 0; d < p; ++d) {
    sent_before += layout.send_prefix[d];
    send_total += layout.send[d];
  }
  const std::int64_t filler_first = rank * c - sent_before;
  const std::int64_t filler_end = filler_first + (c - send_total);
  Runs runs;
  std::int64_t dest_fillers_first = 0;  // global filler index of dest d's first filler
  for (int d = 0; d < p; ++d) {
    const std::int64_t base_key = d * c;
    append_run(runs, {base_key + layout.send_prefix[d], layout.send[d], 0});
    const std::int64_t count = c - layout.recv_totals[d];
    const std::int64_t lo = std::max(filler_first, dest_fillers_first);
    const std::int64_t hi = std::min(filler_end, dest_fillers_first + count);
    if (lo < hi)
      append_run(runs, {base_key + layout.recv_totals[d] + (lo - dest_fillers_first), hi - lo, 1});
    dest_fillers_first += count;
  }
  return runs;
}

void spread_to_runs(std::byte* window, std::int64_t elem, std::span<const Run> pieces) {
  std::int64_t pos = total_length(pieces), packed = real_length(pieces);
  for (auto r = pieces.rbegin(); r != pieces.rend(); ++r) {
    pos -= r->length;
    if (r->filler) continue;
    packed -= r->length;
    if (packed != pos)
      std::memmove(window + pos * elem, window + packed * elem,
                   static_cast<std::size_t>(r->length * elem));
  }
}

bool is_final(int rank, const Layout& layout, std::span<const Run> runs) {
  const std::int64_t c = layout.length, received = layout.recv_totals[rank];
  Runs expected;
  append_run(expected, {rank * c, received, 0});
  append_run(expected, {rank * c + received, c - received, 1});
  return std::equal(runs.begin(), runs.end(), expected.begin(), expected.end(),
                    [](const Run& a, const Run& b) {
                      return a.key == b.key && a.length == b.length && a.filler == b.filler;
                    });
}

void send_runs(State& state, int peer, std::span<const Run> runs) {
  const auto count = static_cast<int>(runs.size() * sizeof(Run));
  check_mpi(MPI_Send(runs.data(), count, MPI_BYTE, peer, tags::kInplaceRuns.tag(), state.ctx.comm),
            "MPI_Send");
}

Runs recv_runs(State& state, int peer) {
  MPI_Status status;
  check_mpi(MPI_Probe(peer, tags::kInplaceRuns.tag(), state.ctx.comm, &status), "MPI_Probe");
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  Runs runs(static_cast<std::size_t>(bytes) / sizeof(Run));
  check_mpi(MPI_Recv(runs.data(), bytes, MPI_BYTE, peer, tags::kInplaceRuns.tag(), state.ctx.comm,
                     MPI_STATUS_IGNORE),
            "MPI_Recv");
  state.note_runs(runs.size());
  return runs;
}

Runs exchange_runs(State& state, int peer) {
  MPI_Request request;
  const auto count = static_cast<int>(state.runs.size() * sizeof(Run));
  check_mpi(MPI_Isend(state.runs.data(), count, MPI_BYTE, peer, tags::kInplaceRuns.tag(),
                      state.ctx.comm, &request),
            "MPI_Isend");
  Runs theirs = recv_runs(state, peer);
  check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  return theirs;
}

void swap_range(State& state, int peer, std::byte* range, std::span<const Run> mine,
                std::span<const Run> theirs) {
  const std::int64_t elem = state.elem();
  const std::int64_t n = total_length(mine);
  // Up to kSlots windows in flight, each with its own part of the scratch, so that a pair
  // is not one round trip per window.
  const std::int64_t per_scratch = std::max<std::int64_t>(1, state.scratch.bytes / elem);
  const int slots = static_cast<int>(std::clamp<std::int64_t>(
      std::min(per_scratch, (n + kMinWindow - 1) / kMinWindow), 1, kSlots));
  const std::int64_t window = per_scratch / slots;
  std::vector<MPI_Request> requests(2 * slots, MPI_REQUEST_NULL);
  std::vector<Runs> arriving(slots);
  std::vector<std::byte*> at(slots);
  std::int64_t next = 0;
  auto start = [&](int slot) {
    while (next < n) {
      const std::int64_t count = std::min(window, n - next);
      const Runs my_pieces = slice_runs(mine, next, count);
      arriving[slot] = slice_runs(theirs, next, count);
      at[slot] = range + next * elem;
      next += count;
      std::byte* staging = state.scratch.data + slot * window * elem;
      const std::int64_t my_bytes = pack_real(at[slot], my_pieces, elem, staging);
      const std::int64_t their_bytes = real_length(arriving[slot]) * elem;
      if (my_bytes == 0 && their_bytes == 0) continue;
      check_mpi(MPI_Irecv(at[slot], static_cast<int>(their_bytes), MPI_BYTE, peer,
                          tags::kInplaceData.tag(), state.ctx.comm, &requests[2 * slot]),
                "MPI_Irecv");
      check_mpi(MPI_Isend(staging, static_cast<int>(my_bytes), MPI_BYTE, peer,
                          tags::kInplaceData.tag(), state.ctx.comm, &requests[2 * slot + 1]),
                "MPI_Isend");
      return;
    }
  };
  for (int slot = 0; slot < slots; ++slot) start(slot);
  for (;;) {
    int index = MPI_UNDEFINED;
    check_mpi(MPI_Waitany(2 * slots, requests.data(), &index, MPI_STATUS_IGNORE), "MPI_Waitany");
    if (index == MPI_UNDEFINED) return;
    const int slot = index / 2;
    if (requests[2 * slot] != MPI_REQUEST_NULL || requests[2 * slot + 1] != MPI_REQUEST_NULL)
      continue;
    spread_to_runs(at[slot], elem, arriving[slot]);
    start(slot);
  }
}

}  // namespace a2av::inplace
