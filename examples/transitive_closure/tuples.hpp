// Pairs of vertices as one 64-bit word (source in the high half), their hash, and a set of
// them: the relations of the transitive closure (TuNA paper, Section VI-B).
#pragma once

#include <cstdint>
#include <vector>

namespace tc {

using Vertex = std::uint32_t;
using Tuple = std::uint64_t;

// The largest vertex id: the pair (max+1, max+1) is the set's empty slot.
constexpr Vertex kMaxVertex = 0xfffffffeU;

inline Tuple make_tuple(Vertex from, Vertex to) {
  return (Tuple{from} << 32) | to;
}
inline Vertex source(Tuple t) {
  return static_cast<Vertex>(t >> 32);
}
inline Vertex target(Tuple t) {
  return static_cast<Vertex>(t);
}

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The rank that joins on vertex v: a hash, so R-MAT's hubs do not all land on rank 0.
inline int owner(Vertex v, int ranks) {
  return static_cast<int>((mix(v) >> 32) % ranks);
}

// An open-addressing hash set (linear probing, at most half full): several times faster and
// smaller than std::unordered_set for the tens of millions of pairs a closure holds.
class TupleSet {
 public:
  TupleSet() : slots_(16, kEmpty) {}
  // Whether t was new.
  bool insert(Tuple t) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    return place(slots_, t);
  }
  std::size_t size() const { return size_; }
  // Sum of mix(t) over the set: order-independent, so ranks' sums add up to the whole's.
  std::uint64_t hash() const {
    std::uint64_t h = 0;
    for (Tuple t : slots_)
      if (t != kEmpty) h += mix(t);
    return h;
  }

 private:
  static constexpr Tuple kEmpty = ~Tuple{0};
  bool place(std::vector<Tuple>& slots, Tuple t) {
    const std::size_t m = slots.size() - 1;
    for (std::size_t i = mix(t) & m;; i = (i + 1) & m) {
      if (slots[i] == t) return false;
      if (slots[i] == kEmpty) {
        slots[i] = t;
        ++size_;
        return true;
      }
    }
  }
  void grow() {
    std::vector<Tuple> bigger(2 * slots_.size(), kEmpty);
    size_ = 0;
    for (Tuple t : slots_)
      if (t != kEmpty) place(bigger, t);
    slots_.swap(bigger);
  }
  std::vector<Tuple> slots_;
  std::size_t size_ = 0;
};

}  // namespace tc
