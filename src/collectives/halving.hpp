// The pieces reduce and allreduce share ([Lecture14], "Reduction",
// "Allreduce"; Rabenseifner's reduce-scatter + gather/allgather, as in MPICH): the fold of
// a non-power of two, recursive-halving reduce-scatter and its mirror images. Operands are
// always combined lower ranks first, so non-commutative operators are exact.
#pragma once

#include "collectives/common.hpp"

namespace a2av::coll {

// After the fold, p2 = 2^floor(lg P) ranks go on with new ranks 0..p2-1 in rank order, new
// rank x standing for old ranks [first(x), first(x + 1)): among the first 2 extra ranks,
// each even rank hands its vector to the odd rank above, which combines them.
struct Fold {
  int p2 = 1, extra = 0;
  int newrank = -1;  // -1: this rank handed its vector on
  int rank_of(int x) const { return x < extra ? 2 * x + 1 : x + extra; }
};

// Folds acc (count elements) in place; scratch is count elements of room.
Fold fold(std::byte* acc, std::byte* scratch, std::int64_t count, const Type& type, MPI_Op op,
          const Comm& c);
// The odd ranks of the fold send acc back to their even partners.
void unfold(const Fold& f, std::byte* acc, std::int64_t count, const Type& type, const Comm& c);

// Pieces [lo, hi) of acc, cut in p2 pieces.
struct Window {
  int lo, hi;
};

// Recursive halving among the p2 ranks, partner distance 1, 2, 4, ... (so each partial
// result covers a contiguous range of ranks): returns the one piece this rank holds
// reduced over all ranks. lg p2 alpha + (p2-1)/p2 n (beta + gamma).
Window reduce_scatter_halving(std::byte* acc, std::byte* scratch, const Pieces& pieces,
                              const Type& type, MPI_Op op, const Fold& f, const Comm& c);
// Its mirror: recursive doubling until every rank holds every piece.
void allgather_doubling(std::byte* acc, const Pieces& pieces, Window w, const Type& type,
                        const Fold& f, const Comm& c);
// Its mirror as a binomial gather to new rank `target`; returns whether this rank is it.
bool gather_halves(std::byte* acc, const Pieces& pieces, Window w, int target, const Type& type,
                   const Fold& f, const Comm& c);

}  // namespace a2av::coll
