// Names, the automatic choice and the lecture's alpha-beta cost of every collective
// algorithm ([Lecture14]; each algorithm's file says where its
// formula comes from). n is the lecture's n: the vector for bcast/reduce/allreduce, all P
// blocks for scatter/gather/allgather, one rank's P blocks for alltoall.
#include "collectives/common.hpp"

#include "core/check.hpp"
#include "core/spec.hpp"

#include <array>
#include <cmath>
#include <utility>
#include <vector>

namespace a2av::coll {
namespace {

using enum Algorithm;

constexpr std::array<std::pair<Algorithm, std::string_view>, 9> kAlgorithmNames{{
    {automatic, "auto"},
    {binomial, "binomial"},
    {scatter_allgather, "scatter_allgather"},
    {recursive_doubling, "recursive_doubling"},
    {rabenseifner, "rabenseifner"},
    {linear, "linear"},
    {ring, "ring"},
    {exchange, "exchange"},
    {bruck, "bruck"},
}};

constexpr std::array<std::string_view, 7> kCollectiveNames{
    "bcast", "reduce", "allreduce", "scatter", "gather", "allgather", "alltoall"};

// The fold of a non-power of two (reduce, allreduce, allgather): P - p2 extra ranks hand
// their data to a partner first and, for the all-collectives, get the result back after.
struct FoldShape {
  double p2, extra;
  explicit FoldShape(int p) : p2(floor_pow2(p)), extra(p - floor_pow2(p)) {}
  double steps() const { return std::log2(p2); }
  double share() const { return (p2 - 1) / p2; }  // the (p-1)/p of a power of two
};

// Bytes Bruck sends in all: round k forwards the blocks whose index has bit k set.
double bruck_blocks(int p) {
  double blocks = 0;
  for (int dist = 1; dist < p; dist <<= 1)
    for (int j = 0; j < p; ++j) blocks += (j & dist) ? 1 : 0;
  return blocks;
}

double reduce_cost(Algorithm a, int p, double n, const Machine& m) {
  const double lg = ceil_log2(p);
  const FoldShape f(p);
  const double fold = f.extra > 0 ? m.alpha + n * (m.beta + m.gamma) : 0;
  if (a == binomial) return lg * (m.alpha + n * (m.beta + m.gamma));
  // rabenseifner: recursive halving, then a binomial gather of the pieces
  return fold + 2 * f.steps() * m.alpha + 2 * f.share() * n * m.beta + f.share() * n * m.gamma;
}

double allreduce_cost(Algorithm a, int p, double n, const Machine& m) {
  const FoldShape f(p);
  const double fold = f.extra > 0 ? 2 * (m.alpha + n * m.beta) + n * m.gamma : 0;
  if (a == recursive_doubling) return fold + f.steps() * (m.alpha + n * (m.beta + m.gamma));
  return fold + 2 * f.steps() * m.alpha + 2 * f.share() * n * m.beta + f.share() * n * m.gamma;
}

double allgather_cost(Algorithm a, int p, double n, const Machine& m) {
  const double share = (p - 1.0) / p;
  if (a == ring) return (p - 1) * m.alpha + share * n * m.beta;
  const FoldShape f(p);
  const double fold = f.extra > 0 ? 2 * m.alpha + (n / p + n) * m.beta : 0;
  return fold + f.steps() * m.alpha + f.share() * n * m.beta;
}

}  // namespace

std::string_view name(Collective collective) {
  return kCollectiveNames[static_cast<std::size_t>(collective)];
}

std::string_view name(Algorithm algorithm) {
  for (const auto& [a, text] : kAlgorithmNames)
    if (a == algorithm) return text;
  return "?";
}

Collective parse_collective(std::string_view text) {
  for (std::size_t i = 0; i < kCollectiveNames.size(); ++i)
    if (kCollectiveNames[i] == text) return static_cast<Collective>(i);
  fail(A2AV_ERR_ARG,
       "unknown collective '{}'. accepted: bcast, reduce, allreduce, scatter, "
       "gather, allgather, alltoall",
       text);
}

// Through the library's one spec parser (core/spec.hpp); no algorithm has parameters.
Algorithm parse_algorithm(std::string_view text) {
  static const std::vector<SpecGrammar> grammar = [] {
    std::vector<SpecGrammar> out;
    for (const auto& [a, known] : kAlgorithmNames) out.push_back({known, {}});
    return out;
  }();
  return kAlgorithmNames[parse_spec(text, grammar, {"collective ", false}).index].first;
}

std::vector<Algorithm> algorithms(Collective collective) {
  switch (collective) {
    case Collective::bcast:
      return {binomial, scatter_allgather};
    case Collective::reduce:
      return {binomial, rabenseifner};
    case Collective::allreduce:
      return {recursive_doubling, rabenseifner};
    case Collective::scatter:
    case Collective::gather:
      return {linear, binomial};
    case Collective::allgather:
      return {recursive_doubling, ring};
    case Collective::alltoall:
      return {exchange, bruck};
  }
  return {};
}

// The switch points are MPICH's defaults (the lecture's polyalgorithms, "Inside MPI-CH"):
// latency-bound trees and hypercubes for short messages, bandwidth-optimal algorithms for
// long ones; reduce-scatter needs at least one element per piece.
Algorithm choose(Collective collective, int size, std::int64_t bytes, std::int64_t count) {
  switch (collective) {
    case Collective::bcast:
      return bytes < 12288 || size < 8 ? binomial : scatter_allgather;
    case Collective::reduce:
      return bytes > 2048 && count >= floor_pow2(size) ? rabenseifner : binomial;
    case Collective::allreduce:
      return bytes > 2048 && count >= floor_pow2(size) ? rabenseifner : recursive_doubling;
    case Collective::scatter:
    case Collective::gather:
      return binomial;
    case Collective::allgather:
      return bytes * size < 524288 ? recursive_doubling : ring;
    case Collective::alltoall:
      return bytes <= 256 && size >= 8 ? bruck : exchange;
  }
  return automatic;
}

double predict(Collective collective, Algorithm a, int p, std::int64_t bytes, const Machine& m) {
  if (p == 1) return 0;
  const double lg = ceil_log2(p), share = (p - 1.0) / p;
  const double block = static_cast<double>(bytes), all = block * p;  // all: P blocks
  switch (collective) {
    case Collective::bcast:
      if (a == binomial) return lg * (m.alpha + block * m.beta);
      return (lg + p - 1) * m.alpha + 2 * share * block * m.beta;
    case Collective::reduce:
      return reduce_cost(a, p, block, m);
    case Collective::allreduce:
      return allreduce_cost(a, p, block, m);
    case Collective::scatter:
    case Collective::gather:
      return (a == linear ? p - 1 : lg) * m.alpha + share * all * m.beta;
    case Collective::allgather:
      return allgather_cost(a, p, all, m);
    case Collective::alltoall:
      if (a == exchange) return (p - 1) * (m.alpha + block * m.beta);
      return lg * m.alpha + bruck_blocks(p) * block * m.beta;
  }
  return 0;
}

}  // namespace a2av::coll
