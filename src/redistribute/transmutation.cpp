#include "redistribute/transmutation.hpp"

#include "core/check.hpp"

#include <algorithm>

namespace a2av::redist {
namespace {

// q[j] = the block whose content block j must receive, or -1 (the pseudo-inverse).
std::vector<std::int64_t> pseudo_inverse(std::span<const std::int64_t> p) {
  std::vector<std::int64_t> q(p.size(), -1);
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] >= 0) q[static_cast<std::size_t>(p[i])] = static_cast<std::int64_t>(i);
  return q;
}

}  // namespace

void check_transmutation(std::span<const std::int64_t> p) {
  const auto n = static_cast<std::int64_t>(p.size());
  std::vector<std::int64_t> source(p.size(), -1);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t j = p[i];
    if (j < 0) continue;
    if (j >= n) fail(A2AV_ERR_ARG, "block {} maps to {}, outside 0..{}", i, j, n - 1);
    if (source[j] >= 0)
      fail(A2AV_ERR_ARG, "blocks {} and {} both map to block {}: not injective", source[j], i, j);
    source[j] = i;
  }
}

std::vector<Factor> factorize(std::span<const std::int64_t> p) {
  const auto n = static_cast<std::int64_t>(p.size());
  std::vector<std::int64_t> q = pseudo_inverse(p);
  const std::vector<std::int64_t> source = q;
  std::vector<Factor> factors;
  for (std::int64_t k = 0; k < n; ++k) {
    if (p[k] < 0 && source[k] < 0) {
      factors.push_back({false, {k}});  // a free block nothing moves into: the shift [k]
      continue;
    }
    if (q[k] < 0) continue;  // nothing arrives at k, or k is done
    std::int64_t i = k, j = p[i];
    while (j >= 0 && j != k) i = j, j = p[i];  // forward until the end of a shift or back at k
    Factor f;
    f.cycle = j == k;
    // Walk backwards from the last point through q, marking points done.
    for (std::int64_t x = f.cycle ? k : i; x >= 0;) {
      f.points.push_back(x);
      const std::int64_t prev = q[x];
      q[x] = -1;
      if (f.cycle && prev == k) break;
      x = prev;
    }
    std::reverse(f.points.begin(), f.points.end());
    if (f.cycle) std::rotate(f.points.begin(), f.points.end() - 1, f.points.end());  // k first
    if (!f.cycle || f.points.size() > 1) factors.push_back(std::move(f));
  }
  return factors;
}

std::int64_t minimal_copies(std::span<const std::int64_t> p) {
  std::int64_t copies = 0;
  for (const Factor& f : factorize(p)) {
    const auto len = static_cast<std::int64_t>(f.points.size());
    copies += f.cycle ? len + 1 : len - 1;
  }
  return copies;
}

std::int64_t local_redistribute(std::span<const std::int64_t> p, const CopyBlock& copy) {
  const auto n = static_cast<std::int64_t>(p.size());
  std::vector<std::int64_t> q = pseudo_inverse(p);
  std::int64_t copies = 0;
  auto move = [&](std::int64_t to, std::int64_t from) {
    copy(to, from);
    ++copies;
  };
  for (std::int64_t k = 0; k < n; ++k) {
    if (q[k] < 0) continue;
    std::int64_t i = k, j = p[i];
    while (j >= 0 && j != k) i = j, j = p[i];
    if (j < 0) {  // shift ending at i: fill i from its source, then that from its source...
      for (j = i, i = q[j]; i >= 0; j = i, i = q[j]) {
        move(j, i);
        q[j] = -1;
      }
    } else if (i != k) {  // non-trivial cycle: park the last, rotate, restore
      move(kTemporary, j);
      for (i = q[j]; i != k; j = i, i = q[j]) {
        move(j, i);
        q[j] = -1;
      }
      move(j, kTemporary);
    }
    q[j] = -1;
  }
  return copies;
}

}  // namespace a2av::redist
