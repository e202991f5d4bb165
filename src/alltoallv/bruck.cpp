// bruck: the parameterized uniform Bruck algorithm, for exchanges whose blocks all have one
// size (MPI_Alltoall's, or an alltoallv whose counts happen to agree). A block travels its
// distance (dest - source mod P) one base-r digit at a time, as in TuNA, but with no sizes
// to carry: every rank knows every message's length. Three phases: a rotation (block for
// rank+i to slot i of a staging array), ceil(log_r P) digit places of up to r-1 rounds
// each, all rounds of one place in flight together (they move disjoint slots), and the
// inverse rotation into the receive buffer. Copies per byte: in, out, and once per round
// that forwards it. Memory: the staging array (P blocks) and one place's packed messages
// each way (at most P-1 blocks each).
// Source: Fan et al. [Fan24], Section II(a) and II(c) (Bruck et al.'s algorithm and its
// tunable radix; r = sqrt P best overall); TuNA (tuna.cpp) is its variable-size form.
//
// Where the blocks are not all of one size (agreed before it runs: the largest block times
// P^2 equals the sum of all blocks), it runs tuna with the same radix.
#include "alltoallv/registry.hpp"
#include "alltoallv/tuna.hpp"
#include "core/p2p.hpp"
#include "core/tags.hpp"

#include <cstring>
#include <vector>

namespace a2av {
namespace {

constexpr int kTag = tags::kBruck.tag();

// Calls slot(i, at) for every slot that moves at digit place `place`, in message order (by
// digit value, then index), `at` its offset in the packed messages; returns the offset of
// each value's message (value - 1) and, last, the total.
template <class Slot>
std::vector<std::int64_t> for_each_moving_slot(int place, int radix, int size, std::int64_t block,
                                               Slot slot) {
  std::vector<std::int64_t> starts;
  std::int64_t at = 0;
  for (int v = 1; v < radix && v * place < size; ++v) {
    starts.push_back(at);
    for (int i = 1; i < size; ++i)
      if (i / place % radix == v) {
        slot(i, at);
        at += block;
      }
  }
  starts.push_back(at);
  return starts;
}

// One digit place: every slot whose digit at `place` is v goes to rank + v * place, in one
// message per v; the slots that arrive from rank - v * place are the same ones.
void exchange_place(const AlgorithmCall& ex, int place, int radix, std::byte* slots,
                    std::int64_t block, TempBuffer& out, TempBuffer& in) {
  const int me = ex.ctx.rank, size = ex.ctx.size;
  out.grow(size * block);
  in.grow(size * block);
  const std::vector<std::int64_t> starts = for_each_moving_slot(
      place, radix, size, block,
      [&](int i, std::int64_t at) { std::memcpy(out.data() + at, slots + i * block, block); });
  Requests requests(nullptr, InFlight::limit());
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    const int distance = static_cast<int>(k + 1) * place;
    const std::int64_t bytes = starts[k + 1] - starts[k];
    requests.exchange(in.data() + starts[k], bytes, (me - distance + size) % size,
                      out.data() + starts[k], bytes, (me + distance) % size, kTag, ex.ctx.comm);
  }
  requests.wait_all(ex.mismatch);
  for_each_moving_slot(place, radix, size, block, [&](int i, std::int64_t at) {
    std::memcpy(slots + i * block, in.data() + at, block);
  });
}

// The tuna spec that runs where the blocks differ: the same radix, tuna's other defaults.
ParamValues tuna_params(const ParamValues& bruck) {
  ParamValues values;
  for (const Param* p : tuna_algorithm().params) values.set(*p, p->fallback);
  values.set(kRadix, bruck[kRadix]);
  return values;
}

void run_bruck(const AlgorithmCall& ex, const ParamValues& params) {
  if (!ex.uniform_blocks) return tuna_algorithm().run(ex, tuna_params(params));
  const int me = ex.ctx.rank, size = ex.ctx.size;
  const std::int64_t block = ex.max_block_bytes;
  if (size == 1 || block == 0) return copy_self_block(ex);
  const int radix = tuna_radix(params[kRadix], size);
  TempBuffer slots(ex.memory, size * block), out(ex.memory, 0), in(ex.memory, 0);
  for (int i = 0; i < size; ++i)
    std::memcpy(slots.data() + i * block, ex.send.at((me + i) % size), block);
  for (int place = 1; place < size; place *= radix)
    exchange_place(ex, place, radix, slots.data(), block, out, in);
  for (int i = 0; i < size; ++i)
    std::memcpy(ex.recv.at((me - i + size) % size), slots.data() + i * block, block);
}

std::int64_t bruck_bound(const BoundInput& in, const ParamValues& p) {
  const std::int64_t uniform = in.size == 1 ? 0 : 3 * in.size * in.max_block;
  return std::max(uniform, tuna_bound(in, tuna_params(p)));
}

// What runs: tuna where the blocks are not all of one size.
void resolve_bruck(Spec& spec, const Topology& t) {
  if (t.uniform_blocks) return spec.params.set(kRadix, tuna_radix(spec.params[kRadix], t.size));
  spec = {&tuna_algorithm(), tuna_params(spec.params), spec.validate};
  resolve_tuna_shape(spec, t.size);
}

}  // namespace

const AlgorithmDescriptor& bruck_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "bruck",
      .summary = "Bruck's rounds for blocks of one size: base-radix digits, no sizes sent",
      .params = {&kRadix},
      .restrictions = "every block of every rank of one size",
      .fallback = "tuna",
      .source = "[Fan24] Section II(a), II(c)",
      .run = run_bruck,
      .memory_bound = bruck_bound,
      .model = {ModelShape::bruck},
      .resolve = resolve_bruck,
      .test_specs = {{"bruck"}, {"bruck:radix=2"}},
      .needs_agreed_blocks = true,
      .bounds_in_flight = true,
  };
  return d;
}

}  // namespace a2av
