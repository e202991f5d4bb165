#include "collectives/halving.hpp"

namespace a2av::coll {
namespace {

std::byte* piece_at(std::byte* base, const Pieces& pieces, int j, const Type& type) {
  return base + pieces.begin(j) * type.extent;
}

// acc = (partner's partial) op acc or acc op (partner's), by which side holds lower ranks.
void combine(std::byte* acc, std::byte* theirs, std::int64_t count, bool theirs_lower,
             const Type& type, MPI_Op op) {
  if (theirs_lower || commutative(op)) return reduce_local(theirs, acc, count, type, op);
  reduce_local(acc, theirs, count, type, op);
  copy(theirs, acc, count, type);
}

// The window the partner holds, which with ours makes the window both held before the
// halving step that split them; the lower rank kept the lower half.
Window sibling(Window w, bool lower) {
  const int n = w.hi - w.lo;
  return lower ? Window{w.hi, w.hi + n} : Window{w.lo - n, w.lo};
}

}  // namespace

Fold fold(std::byte* acc, std::byte* scratch, std::int64_t count, const Type& type, MPI_Op op,
          const Comm& c) {
  Fold f{floor_pow2(c.size), c.size - floor_pow2(c.size), c.rank - (c.size - floor_pow2(c.size))};
  if (c.rank >= 2 * f.extra) return f;
  if (c.rank % 2 == 0) {
    send(acc, count, type, c.rank + 1, c);
    f.newrank = -1;
    return f;
  }
  recv(scratch, count, type, c.rank - 1, c);
  reduce_local(scratch, acc, count, type, op);  // the even rank's vector is the left operand
  f.newrank = c.rank / 2;
  return f;
}

void unfold(const Fold& f, std::byte* acc, std::int64_t count, const Type& type, const Comm& c) {
  if (c.rank >= 2 * f.extra) return;
  if (c.rank % 2 == 0)
    recv(acc, count, type, c.rank + 1, c);
  else
    send(acc, count, type, c.rank - 1, c);
}

Window reduce_scatter_halving(std::byte* acc, std::byte* scratch, const Pieces& pieces,
                              const Type& type, MPI_Op op, const Fold& f, const Comm& c) {
  Window w{0, f.p2};
  for (int mask = 1; mask < f.p2; mask <<= 1) {
    const int partner = f.newrank ^ mask;
    const bool lower = f.newrank < partner;
    const int mid = (w.lo + w.hi) / 2;
    const Window keep = lower ? Window{w.lo, mid} : Window{mid, w.hi};
    const Window give = lower ? Window{mid, w.hi} : Window{w.lo, mid};
    const std::int64_t n = pieces.length(keep.lo, keep.hi);
    sendrecv(piece_at(acc, pieces, give.lo, type), pieces.length(give.lo, give.hi),
             f.rank_of(partner), piece_at(scratch, pieces, keep.lo, type), n, f.rank_of(partner),
             type, c);
    combine(piece_at(acc, pieces, keep.lo, type), piece_at(scratch, pieces, keep.lo, type), n,
            !lower, type, op);
    w = keep;
  }
  return w;
}

void allgather_doubling(std::byte* acc, const Pieces& pieces, Window w, const Type& type,
                        const Fold& f, const Comm& c) {
  for (int mask = f.p2 / 2; mask > 0; mask >>= 1) {
    const int partner = f.newrank ^ mask;
    const Window other = sibling(w, f.newrank < partner);
    sendrecv(piece_at(acc, pieces, w.lo, type), pieces.length(w.lo, w.hi), f.rank_of(partner),
             piece_at(acc, pieces, other.lo, type), pieces.length(other.lo, other.hi),
             f.rank_of(partner), type, c);
    w = Window{std::min(w.lo, other.lo), std::max(w.hi, other.hi)};
  }
}

bool gather_halves(std::byte* acc, const Pieces& pieces, Window w, int target, const Type& type,
                   const Fold& f, const Comm& c) {
  for (int mask = f.p2 / 2; mask > 0; mask >>= 1) {
    const int partner = f.newrank ^ mask;
    // Ranks agreeing with the target on this bit stay; the others hand over and are done.
    if ((f.newrank & mask) != (target & mask)) {
      send(piece_at(acc, pieces, w.lo, type), pieces.length(w.lo, w.hi), type, f.rank_of(partner),
           c);
      return false;
    }
    const Window other = sibling(w, f.newrank < partner);
    recv(piece_at(acc, pieces, other.lo, type), pieces.length(other.lo, other.hi), type,
         f.rank_of(partner), c);
    w = Window{std::min(w.lo, other.lo), std::max(w.hi, other.hi)};
  }
  return true;
}

}  // namespace a2av::coll
