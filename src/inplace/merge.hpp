// In-place stable merge of two adjacent sorted runs of fixed-size records: the merge(s1, s2)
// "fundamental mean" of Zhuang et al., memory-efficient all-to-all, Section 3.1, in the form
// its footnote *1 settles on: Huang and Langston's block merge with an O(sqrt n) buffer.
//
// Algorithm (Kronrod / Huang-Langston buffered block merge, buffer external), b = ceil(sqrt n):
//  1. If either run has at most b elements, copy it to the buffer and merge directly.
//  2. Otherwise set aside the head of the left run (left mod b elements) and the tail of the
//     right run (right mod b), leaving whole blocks of b elements in between.
//  3. Order the whole blocks by first element, left-run blocks first on ties: a merge of the
//     two already-ordered block lists, applied by cycle following with one block of buffer,
//     so every block moves once.
//  4. Sweep the blocks once: the pending fragment is merged through the buffer with the next
//     block when that block comes from the other run ("local merges").
//  5. Merge the tail back in from the right and the head from the left through the buffer.
// Time: O(n): under 3n + 2 sqrt(n) comparisons and under 8n element moves.
// Extra memory: the caller's scratch of inplace_merge_scratch_elements(n, elem_size)
// = b + ceil(4 * floor(n / b) / elem_size) elements (b for the buffer, a 4-byte source index
// per block), at most 5 * ceil(sqrt n) elements for any element size; O(1) besides.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

namespace a2av {

// Scratch elements inplace_merge needs for n = left + right elements of elem_size bytes;
// the default elem_size = 1 gives a bound valid for every element size.
std::size_t inplace_merge_scratch_elements(std::size_t n, std::size_t elem_size = 1);

using MergeLess = std::function<bool(const std::byte*, const std::byte*)>;

// Merges the sorted runs [base, base+left) and [base+left, base+left+right) (counts in
// elements of elem_size bytes) into one sorted run, stably, using `scratch` (at least
// inplace_merge_scratch_elements(left+right, elem_size) elements) as the only extra memory.
void inplace_merge(std::byte* base, std::size_t left, std::size_t right, std::size_t elem_size,
                   std::byte* scratch, const MergeLess& less);

namespace detail {

std::size_t ceil_sqrt(std::size_t n);

// The merge, generic in the element size: std::size_t at run time, or
// std::integral_constant for a compile-time size so that element copies inline.
template <class Size, class Less>
class BlockMerger {
 public:
  BlockMerger(Size size, std::byte* scratch, Less& less)
      : size_(size), scratch_(scratch), less_(less) {}

  void merge(std::byte* base, std::size_t left, std::size_t right) {
    if (left == 0 || right == 0 || !less_(at(base, left), at(base, left - 1))) return;
    const std::size_t b = ceil_sqrt(left + right);
    if (std::min(left, right) <= b) return merge_small(base, left, right);
    const std::size_t head = left % b;
    const std::size_t tail = right % b;
    std::byte* mid = at(base, head);
    merge_blocks(mid, left / b, right / b, b);
    merge_small(mid, left - head + right - tail, tail);
    merge_small(base, head, left + right - head);
  }

 private:
  static constexpr std::uint32_t kVisited = std::uint32_t{1} << 31;

  std::size_t sz() const { return static_cast<std::size_t>(size_); }
  std::byte* at(std::byte* p, std::size_t i) const { return p + i * sz(); }
  void copy(std::byte* dst, const std::byte* src, std::size_t count) const {
    std::memcpy(dst, src, count * sz());
  }

  // One run fits in the buffer: copy it out and merge towards the other end.
  void merge_small(std::byte* base, std::size_t left, std::size_t right) {
    if (left == 0 || right == 0 || !less_(at(base, left), at(base, left - 1))) return;
    if (left <= right) return merge_left_buffered(base, left, right);
    merge_right_buffered(base, left, right);
  }

  void merge_left_buffered(std::byte* base, std::size_t left, std::size_t right) {
    copy(scratch_, base, left);
    std::byte* buf = scratch_;
    std::byte* in = at(base, left);
    std::byte* out = base;
    merge_forward<true>(buf, at(scratch_, left), in, at(base, left + right), out);
    copy(out, buf, static_cast<std::size_t>(at(scratch_, left) - buf) / sz());
  }

  // Backward, so that equal elements of the right run (in the buffer) land last.
  void merge_right_buffered(std::byte* base, std::size_t left, std::size_t right) {
    copy(scratch_, at(base, left), right);
    std::byte* buf = at(scratch_, right);
    std::byte* in = at(base, left);
    std::byte* out = at(base, left + right);
    while (buf != scratch_ && in != base) {
      out -= sz();
      std::byte*& src = less_(buf - sz(), in - sz()) ? in : buf;
      src -= sz();
      copy(out, src, 1);
    }
    copy(base, scratch_, static_cast<std::size_t>(buf - scratch_) / sz());
  }

  // Merges the buffer [buf, buf_end), which came from just before `in`, with [in, end) into
  // `out` until either side runs out. kBufFirst: buffer elements win ties (they are from the
  // left run).
  template <bool kBufFirst>
  void merge_forward(std::byte*& buf, std::byte* buf_end, std::byte*& in, std::byte* end,
                     std::byte*& out) {
    while (buf != buf_end && in != end) {
      const bool take_in = kBufFirst ? less_(in, buf) : !less_(buf, in);
      std::byte*& src = take_in ? in : buf;
      copy(out, src, 1);
      src += sz();
      out += sz();
    }
  }

  // Slot blk's source block index lives in scratch after the element buffer; memcpy since the
  // scratch need not be aligned for uint32_t.
  std::uint32_t tag(std::size_t blk) const {
    std::uint32_t v;
    std::memcpy(&v, tags_ + blk * sizeof v, sizeof v);
    return v;
  }
  void set_tag(std::size_t blk, std::uint32_t v) {
    std::memcpy(tags_ + blk * sizeof v, &v, sizeof v);
  }

  void merge_blocks(std::byte* mid, std::size_t ka, std::size_t kb, std::size_t b) {
    tags_ = at(scratch_, b);
    order_blocks(mid, ka, kb, b);
    sweep(mid, ka, ka + kb, b);
  }

  // Left blocks are 0..ka-1, right blocks ka..ka+kb-1; both lists are already ordered, so
  // merging them by first element (left first on ties) gives the stable block order.
  void order_blocks(std::byte* mid, std::size_t ka, std::size_t kb, std::size_t b) {
    std::size_t i = 0;
    std::size_t j = 0;
    for (std::size_t s = 0; s < ka + kb; ++s) {
      const bool take_left = i < ka && (j == kb || !less_(at(mid, (ka + j) * b), at(mid, i * b)));
      set_tag(s, static_cast<std::uint32_t>(take_left ? i++ : ka + j++));
    }
    permute_blocks(mid, ka + kb, b);
  }

  // Slot s receives block tag(s); each cycle parks its first block in the buffer.
  void permute_blocks(std::byte* mid, std::size_t m, std::size_t b) {
    for (std::size_t start = 0; start < m; ++start) {
      if (tag(start) & kVisited) continue;
      if (tag(start) != start) copy(scratch_, at(mid, start * b), b);
      std::size_t s = start;
      for (;;) {
        const std::size_t src = tag(s);
        set_tag(s, static_cast<std::uint32_t>(src) | kVisited);
        if (src == start) break;
        copy(at(mid, s * b), at(mid, src * b), b);
        s = src;
      }
      if (s != start) copy(at(mid, s * b), scratch_, b);
    }
  }

  bool from_left(std::size_t slot, std::size_t ka) const { return (tag(slot) & ~kVisited) < ka; }

  // The pending fragment [pend, next block) is the not yet final part of the output; it is
  // final once a block of its own run follows, or one of the other run ordered after it.
  void sweep(std::byte* mid, std::size_t ka, std::size_t m, std::size_t b) {
    std::byte* pend = mid;
    bool pend_left = from_left(0, ka);
    for (std::size_t s = 1; s < m; ++s) {
      std::byte* blk = at(mid, s * b);
      const bool blk_left = from_left(s, ka);
      if (blk_left == pend_left || in_order(blk - sz(), blk, pend_left)) {
        pend = blk;
        pend_left = blk_left;
        continue;
      }
      const std::size_t plen = static_cast<std::size_t>(blk - pend) / sz();
      copy(scratch_, pend, plen);
      std::byte* buf = scratch_;
      std::byte* buf_end = at(scratch_, plen);
      std::byte* in = blk;
      std::byte* out = pend;
      if (pend_left) {
        merge_forward<true>(buf, buf_end, in, at(blk, b), out);
      } else {
        merge_forward<false>(buf, buf_end, in, at(blk, b), out);
      }
      if (buf == buf_end) {  // the rest of the block is already in place, out == in
        pend = in;
        pend_left = blk_left;
      } else {  // the block ran out: the rest of the fragment stays pending
        copy(out, buf, static_cast<std::size_t>(buf_end - buf) / sz());
        pend = out;
      }
    }
  }

  // Whether `first` may follow `last` unmerged, given which run `last` came from.
  bool in_order(const std::byte* last, const std::byte* first, bool last_from_left) const {
    return last_from_left ? !less_(first, last) : less_(last, first);
  }

  Size size_;
  std::byte* scratch_;
  std::byte* tags_ = nullptr;
  Less& less_;
};

}  // namespace detail

// Byte-level merge with an inlinable comparator on (const std::byte*, const std::byte*).
template <class Less>
void inplace_merge_bytes(std::byte* base, std::size_t left, std::size_t right,
                         std::size_t elem_size, std::byte* scratch, Less less) {
  detail::BlockMerger<std::size_t, Less>(elem_size, scratch, less).merge(base, left, right);
}

// Typed convenience: merges data[0, left) and data[left, size) stably, with its own scratch.
template <class T, class Less>
void inplace_merge(std::span<T> data, std::size_t left, Less less) {
  static_assert(std::is_trivially_copyable_v<T>, "elements are moved as raw bytes");
  std::vector<T> scratch(inplace_merge_scratch_elements(data.size(), sizeof(T)));
  auto byte_less = [&less](const std::byte* a, const std::byte* b) {
    return less(*reinterpret_cast<const T*>(a), *reinterpret_cast<const T*>(b));
  };
  using Size = std::integral_constant<std::size_t, sizeof(T)>;
  detail::BlockMerger<Size, decltype(byte_less)>(
      Size{}, reinterpret_cast<std::byte*>(scratch.data()), byte_less)
      .merge(reinterpret_cast<std::byte*>(data.data()), left, data.size() - left);
}

}  // namespace a2av
