// route_packets: permutation routing over the bitonic merge network
// (Mundani and Rank [Mundani11], Sections II-A and III-A, III-C; Fig. 1 and Fig. 2).
// A packet's key is its destination, so sorting the keys delivers it. One merge pass is
// log2 P' compare-exchange steps with partner rank ^ d, d = P'/2, ..., 1, every rank holding
// one packet per lane throughout. After the step at distance d a packet only moves inside its
// aligned block of d ranks, so a packet kept outside its destination's block is stranded: a
// clash (two packets wanted the same half), which both ranks of the pair see and flag. After
// each pass all ranks agree on the per-lane flags (Section III: "all nodes exchange flags");
// flagged lanes take a correction (odd pairs, then for Correction::transposition even pairs)
// and another pass. It ends: on the 0-1 threshold words of a lane every unsorted fixpoint has
// a 1 just above a 0 at an odd pair, which the correction swaps, so the sum of the 1s'
// positions grows every round (docs/route.md). P not a power of two: virtual ranks
// P..P'-1 hold +infinity, so every comparator reaching one leaves the real packet in place.
//
// Cost per pass: log2 P' MPI_Sendrecv of (8 + packet_bytes) bytes per lane in flight and one
// MPI_Allreduce of one int per lane in flight; a correction adds 1 or 2 MPI_Sendrecv with
// rank +- 1. Extra memory: two records per lane in flight.
#include <a2av/route.hpp>

#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace a2av {
namespace {

// What travels ahead of a packet's payload.
struct Header {
  int dest;
  int source;
};

// Local argument errors, then shapes that differ across ranks: agreed, so every rank throws.
void check_arguments(std::span<std::byte> packets, std::size_t packet_bytes,
                     std::span<const int> dest, const CommContext& ctx) {
  std::string problem;
  if (packets.size() != dest.size() * packet_bytes)
    problem = fmt::format("{} bytes of packets for {} destinations of {} bytes", packets.size(),
                          dest.size(), packet_bytes);
  for (std::size_t m = 0; m < dest.size() && problem.empty(); ++m)
    if (dest[m] < 0 || dest[m] >= ctx.size)
      problem =
          fmt::format("destination {} of lane {} is not a rank of 0..{}", dest[m], m, ctx.size - 1);
  const auto lanes = static_cast<long long>(dest.size());
  const auto bytes = static_cast<long long>(packet_bytes);
  long long shape[5] = {problem.empty() ? 0 : 1, lanes, -lanes, bytes, -bytes};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, shape, 5, MPI_LONG_LONG, MPI_MAX, ctx.comm),
            "MPI_Allreduce");
  if (!problem.empty()) fail(A2AV_ERR_ARG, "route: rank {}: {}", ctx.rank, problem);
  if (shape[0] != 0) fail(A2AV_ERR_ARG, "route: bad arguments on another rank");
  if (shape[1] != -shape[2] || shape[3] != -shape[4])
    fail(A2AV_ERR_ARG, "route: ranks disagree on the packets: {}..{} lanes of {}..{} bytes",
         -shape[2], shape[1], -shape[4], shape[3]);
}

// Every lane's destinations must be a permutation: each rank receives exactly one packet per
// lane. The smallest offending (lane, rank) is agreed, so every rank throws the same message.
void check_permutations(std::span<const int> dest, const CommContext& ctx) {
  const int lanes = static_cast<int>(dest.size());
  if (lanes == 0) return;
  std::vector<int> addressed(static_cast<std::size_t>(lanes) * ctx.size, 0);
  for (int m = 0; m < lanes; ++m) addressed[static_cast<std::size_t>(dest[m]) * lanes + m] = 1;
  std::vector<int> arriving(lanes);
  check_mpi(MPI_Reduce_scatter_block(addressed.data(), arriving.data(), lanes, MPI_INT, MPI_SUM,
                                     ctx.comm),
            "MPI_Reduce_scatter_block");
  const long long p = ctx.size;
  long long worst = std::numeric_limits<long long>::max();  // (lane * P + rank) * (P + 1) + count
  for (int m = 0; m < lanes; ++m)
    if (arriving[m] != 1) worst = std::min(worst, (m * p + ctx.rank) * (p + 1) + arriving[m]);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_LONG_LONG, MPI_MIN, ctx.comm),
            "MPI_Allreduce");
  if (worst == std::numeric_limits<long long>::max()) return;
  fail(A2AV_ERR_ARG,
       "route: lane {} is not a permutation: {} of its packets go to rank {} (each rank must "
       "receive exactly one per lane)",
       worst / (p + 1) / p, worst % (p + 1), worst / (p + 1) % p);
}

class Router {
 public:
  Router(std::span<std::byte> packets, std::size_t packet_bytes, std::span<const int> dest,
         const CommContext& ctx, Correction correction)
      : packets_(packets),
        packet_bytes_(packet_bytes),
        record_(sizeof(Header) + packet_bytes),
        ctx_(ctx),
        correction_(correction),
        width_(static_cast<int>(std::bit_ceil(static_cast<unsigned>(ctx.size)))) {
    result_.lane_rounds.assign(dest.size(), 0);
    result_.sources.assign(dest.size(), ctx.rank);
    records_.resize(dest.size() * record_);
    for (std::size_t m = 0; m < dest.size(); ++m) {
      lanes_.push_back(static_cast<int>(m));
      const Header h{dest[m], ctx.rank};
      std::memcpy(at(m), &h, sizeof h);
      std::copy_n(packets.data() + m * packet_bytes, packet_bytes, at(m) + sizeof h);
    }
  }

  RouteResult run() {
    while (!lanes_.empty()) {
      if (result_.merge_passes > 0) correct();
      merge_pass();
      retire_delivered_lanes();
    }
    return std::move(result_);
  }

 private:
  std::byte* at(std::size_t slot) { return records_.data() + slot * record_; }
  static Header header(const std::byte* record) {
    Header h;
    std::memcpy(&h, record, sizeof h);
    return h;
  }

  void merge_pass() {
    flags_.assign(lanes_.size(), 0);
    for (int d = width_ / 2; d >= 1; d /= 2) {
      const int partner = ctx_.rank ^ d;
      if (partner < ctx_.size) compare_exchange(partner);
      find_clashes(partner, d);
      ++result_.exchange_steps;
    }
    ++result_.merge_passes;
  }

  // Section III-A, Fig. 2: the odd pairs (1,2), (3,4), ..., then maybe the even pairs.
  void correct() {
    transposition_step(1);
    if (correction_ == Correction::transposition) transposition_step(0);
    ++result_.correction_rounds;
  }

  void transposition_step(int first) {
    const int partner = (ctx_.rank - first) % 2 == 0 ? ctx_.rank + 1 : ctx_.rank - 1;
    if (partner >= 0 && partner < ctx_.size) compare_exchange(partner);
    ++result_.exchange_steps;
  }

  // Both ranks send every record in flight; the lower rank keeps the smaller destination.
  void compare_exchange(int partner) {
    incoming_.resize(lanes_.size() * record_);
    Mismatch mismatch;
    sendrecv(records_.data(), static_cast<std::int64_t>(incoming_.size()), partner,
             incoming_.data(), static_cast<std::int64_t>(incoming_.size()), partner,
             tags::kRoute.tag(), ctx_.comm, mismatch);
    mismatch.raise();
    const bool lower = ctx_.rank < partner;
    partner_dest_.resize(lanes_.size());
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const std::byte* theirs = incoming_.data() + i * record_;
      const int mine = header(at(i)).dest, other = header(theirs).dest;
      if (lower ? other < mine : other > mine) std::memcpy(at(i), theirs, record_);
      partner_dest_[i] = lower ? std::max(mine, other) : std::min(mine, other);
    }
  }

  // After the step at distance d the remaining steps keep packets inside aligned blocks of d
  // ranks. A virtual partner holds +infinity, which is never stranded: only our packet counts.
  void find_clashes(int partner, int d) {
    const bool real = partner < ctx_.size;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const bool stranded =
          header(at(i)).dest / d != ctx_.rank / d || (real && partner_dest_[i] / d != partner / d);
      if (!stranded) continue;
      flags_[i] = 1;
      ++result_.clashes;
    }
  }

  // Agrees on the flags; an unflagged lane has every packet at its destination.
  void retire_delivered_lanes() {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, flags_.data(), static_cast<int>(flags_.size()), MPI_INT,
                            MPI_MAX, ctx_.comm),
              "MPI_Allreduce");
    ++result_.agreements;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      if (flags_[i]) {
        std::memmove(at(kept), at(i), record_);
        lanes_[kept++] = lanes_[i];
        continue;
      }
      const auto lane = static_cast<std::size_t>(lanes_[i]);
      result_.lane_rounds[lane] = result_.correction_rounds;
      result_.sources[lane] = header(at(i)).source;
      std::copy_n(at(i) + sizeof(Header), packet_bytes_, packets_.data() + lane * packet_bytes_);
    }
    lanes_.resize(kept);
    records_.resize(kept * record_);
  }

  std::span<std::byte> packets_;
  std::size_t packet_bytes_, record_;
  const CommContext& ctx_;
  Correction correction_;
  int width_;                       // P', the network's size
  std::vector<int> lanes_;          // lanes in flight, in lane order
  std::vector<std::byte> records_;  // their records: Header, then the payload
  std::vector<std::byte> incoming_;
  std::vector<int> partner_dest_;  // per lane in flight: the destination the partner kept
  std::vector<int> flags_;         // per lane in flight: a clash this pass
  RouteResult result_;
};

}  // namespace

RouteResult route_packets(std::span<std::byte> packets, std::size_t packet_bytes,
                          std::span<const int> dest, MPI_Comm comm, const RouteOptions& options) {
  const CommContext& ctx = comm_context(comm);
  check_arguments(packets, packet_bytes, dest, ctx);
  check_permutations(dest, ctx);
  return Router(packets, packet_bytes, dest, ctx, options.correction).run();
}

}  // namespace a2av
