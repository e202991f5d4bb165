#include "alltoallv/tuna_schedule.hpp"

#include "core/per_thread.hpp"

#include <algorithm>
#include <map>

namespace a2av {

namespace {

// A digit's values 1..count in bit-reversed order of value - 1: any run of consecutive
// entries spreads over the whole range.
std::vector<int> spread_values(int count) {
  int bits = 0;
  while ((1 << bits) < count) ++bits;
  std::vector<int> values;
  for (int i = 0; i < (1 << bits); ++i) {
    int reversed = 0;
    for (int b = 0; b < bits; ++b)
      if (i & (1 << b)) reversed |= 1 << (bits - 1 - b);
    if (reversed < count) values.push_back(reversed + 1);
  }
  return values;
}

}  // namespace

std::vector<TunaRound> tuna_rounds(int size, int radix) {
  std::vector<TunaRound> rounds;
  for (std::int64_t place = 1, digit = 0; place < size; place *= radix, ++digit) {
    const int count = static_cast<int>(std::min<std::int64_t>(radix - 1, (size - 1) / place));
    for (int value : spread_values(count)) {
      TunaRound round{static_cast<int>(digit), value, static_cast<int>(value * place), {}};
      // distance = high * radix * place + value * place + low, low < place
      for (std::int64_t high = 0; high * radix * place + value * place < size; ++high)
        for (std::int64_t low = 0; low < place; ++low) {
          const std::int64_t d = high * radix * place + value * place + low;
          if (d >= size) break;
          if (d != round.distance) round.forwarded.push_back(static_cast<int>(d));
        }
      rounds.push_back(std::move(round));
    }
  }
  return rounds;
}

const std::vector<TunaRound>& cached_tuna_rounds(int size, int radix) {
  A2AV_THREAD_LOCAL std::map<std::pair<int, int>, std::vector<TunaRound>> cache;
  auto [it, inserted] = cache.try_emplace({size, radix});
  if (inserted) it->second = tuna_rounds(size, radix);
  return it->second;
}

std::vector<std::pair<std::size_t, std::size_t>> tuna_batches(const std::vector<TunaRound>& rounds,
                                                              int batch) {
  std::vector<std::pair<std::size_t, std::size_t>> batches;
  for (std::size_t first = 0; first < rounds.size();) {
    std::size_t last = first + 1;
    while (last < rounds.size() && last - first < static_cast<std::size_t>(batch) &&
           rounds[last].digit == rounds[first].digit)
      ++last;
    batches.emplace_back(first, last);
    first = last;
  }
  return batches;
}

int tuna_stored_blocks(int size, int radix) {
  int direct = 0;
  for (std::int64_t place = 1; place < size; place *= radix)
    for (int value = 1; value < radix && value * place < size; ++value) ++direct;
  return size - (direct + 1);
}

int tuna_radix(std::int64_t requested, int size) {
  if (requested == 0) {
    int root = 1;
    while (root * root < size) ++root;
    requested = root;
  }
  return static_cast<int>(std::clamp<std::int64_t>(requested, 2, std::max(2, size)));
}

int tuna_batch(std::int64_t requested, int radix) {
  return static_cast<int>(
      std::clamp<std::int64_t>(requested == 0 ? radix - 1 : requested, 1, radix - 1));
}

int hierarchical_node_size(std::int64_t requested, int size, int detected, bool uniform) {
  const int q =
      requested > 0 ? static_cast<int>(std::min<std::int64_t>(requested, size)) : detected;
  return size % q == 0 && (requested > 0 || uniform) ? q : 0;
}

TunaShape tuna_shape(const ParamValues& params, int size) {
  const int radix = tuna_radix(params[kRadix], size);
  return {radix, tuna_batch(params[kBatch], radix), params[kDirectAbove]};
}

std::int64_t tuna_memory_bound(int size, const TunaShape& shape, std::int64_t max_block) {
  const std::int64_t block = std::min(max_block, shape.direct_above);  // larger: direct
  std::size_t widest = 0;
  for (const auto& round : tuna_rounds(size, shape.radix))
    widest = std::max(widest, round.forwarded.size());
  const std::int64_t message =
      tuna_header_bytes(widest) + static_cast<std::int64_t>(widest) * block;
  // Per round in flight: the packed message sent, and the one received (twice while a
  // message longer than one piece is reassembled).
  return tuna_stored_blocks(size, shape.radix) * block + 3 * shape.batch * message;
}

}  // namespace a2av
