// Transmutations and the local redistribution algorithm of MADRE ([Siegel10],
// Section 2: Definitions 2.1-2.3, Theorem 2.7, Figure 2, Theorem 2.9).
//
// A transmutation of {0..n-1} is an injective partial map p: p[i] >= 0 is where block i's
// content must go, p[i] < 0 marks block i free. It factors uniquely into disjoint cycles
// and shifts; moving the blocks takes exactly ncpy = sum over shifts (len - 1) + sum over
// non-trivial cycles (len + 1) copies at minimum, which local_redistribute achieves with one
// temporary block, in O(n) time and O(n) memory.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace a2av::redist {

// Throws A2AV_ERR_ARG naming the first entry that is out of range or maps where another
// already does.
void check_transmutation(std::span<const std::int64_t> p);

struct Factor {
  bool cycle = false;                // else a shift [x1..xm]: x1 is empty afterwards
  std::vector<std::int64_t> points;  // x1, x2, ..., xm with p[x_i] = x_{i+1}
};

// The unique factorisation into non-trivial cycles and shifts (Theorem 2.7), in the order
// Figure 2 discovers them.
std::vector<Factor> factorize(std::span<const std::int64_t> p);

// ncpy(pi) of Theorem 2.9, from the factorisation.
std::int64_t minimal_copies(std::span<const std::int64_t> p);

// Copies block `from` to block `to`; kTemporary stands for the one temporary block.
inline constexpr std::int64_t kTemporary = -1;
using CopyBlock = std::function<void(std::int64_t to, std::int64_t from)>;

// Figure 2: performs the redistribution with `copy` and returns the number of copies made,
// which equals minimal_copies(p). p must be a transmutation (check_transmutation).
std::int64_t local_redistribute(std::span<const std::int64_t> p, const CopyBlock& copy);

}  // namespace a2av::redist
