#include "inplace/run_merge.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace a2av::inplace {
namespace {

// Swaps the disjoint byte ranges [a, a+n) and [b, b+n) through the scratch.
void swap_ranges(std::byte* a, std::byte* b, std::int64_t n, Scratch scratch) {
  for (std::int64_t done = 0; done < n; done += scratch.bytes) {
    const auto piece = static_cast<std::size_t>(std::min(scratch.bytes, n - done));
    std::memcpy(scratch.data, a + done, piece);
    std::memcpy(a + done, b + done, piece);
    std::memcpy(b + done, scratch.data, piece);
  }
}

class RunMerger {
 public:
  RunMerger(std::int64_t elem_size, Scratch scratch) : elem_(elem_size), scratch_(scratch) {}

  void merge(std::byte* base, std::span<const Run> a, std::span<const Run> b) {
    // Runs of a before all of b, and of b after all of a, are in place already.
    while (!a.empty() && !b.empty() && a.front().key < b.front().key) {
      base += a.front().length * elem_;
      a = a.subspan(1);
    }
    while (!a.empty() && !b.empty() && b.back().key > a.back().key) b = b.first(b.size() - 1);
    if (a.empty() || b.empty()) return;
    const std::int64_t a_bytes = total_length(a) * elem_;
    const std::int64_t b_bytes = total_length(b) * elem_;
    if (a.size() == 1 || b.size() == 1)  // now all of b goes before all of a
      return rotate_bytes(base, base + a_bytes, base + a_bytes + b_bytes, scratch_);
    if (a_bytes <= scratch_.bytes) return merge_forward(base, a, b, a_bytes);
    if (b_bytes <= scratch_.bytes) return merge_backward(base + a_bytes, a, b, b_bytes);
    std::size_t cut_a, cut_b;
    if (a.size() >= b.size()) {
      cut_a = a.size() / 2;
      cut_b = runs_below(b, a[cut_a].key);
    } else {
      cut_b = b.size() / 2;
      cut_a = runs_below(a, b[cut_b].key);
    }
    std::byte* a_cut = base + total_length(a.first(cut_a)) * elem_;
    std::byte* b_start = base + a_bytes;
    std::byte* b_cut = b_start + total_length(b.first(cut_b)) * elem_;
    rotate_bytes(a_cut, b_start, b_cut, scratch_);
    merge(base, a.first(cut_a), b.first(cut_b));
    merge(a_cut + (b_cut - b_start), a.subspan(cut_a), b.subspan(cut_b));
  }

 private:
  static std::size_t runs_below(std::span<const Run> runs, std::int64_t key) {
    return static_cast<std::size_t>(
        std::partition_point(runs.begin(), runs.end(),
                             [key](const Run& r) { return r.key < key; }) -
        runs.begin());
  }

  // a (copied to the scratch) and b (in place) merge forwards from base.
  void merge_forward(std::byte* base, std::span<const Run> a, std::span<const Run> b,
                     std::int64_t a_bytes) {
    std::memcpy(scratch_.data, base, static_cast<std::size_t>(a_bytes));
    const std::byte* from_a = scratch_.data;
    const std::byte* from_b = base + a_bytes;
    std::byte* out = base;
    std::size_t i = 0, j = 0;
    while (i < a.size()) {
      const bool take_a = j == b.size() || a[i].key < b[j].key;
      const std::int64_t n = (take_a ? a[i++] : b[j++]).length * elem_;
      const std::byte*& src = take_a ? from_a : from_b;
      std::memmove(out, src, static_cast<std::size_t>(n));
      src += n;
      out += n;
    }  // the rest of b is already in place
  }

  // b (copied to the scratch) and a (in place) merge backwards from b_end.
  void merge_backward(std::byte* b_start, std::span<const Run> a, std::span<const Run> b,
                      std::int64_t b_bytes) {
    std::memcpy(scratch_.data, b_start, static_cast<std::size_t>(b_bytes));
    const std::byte* from_b = scratch_.data + b_bytes;
    const std::byte* from_a = b_start;
    std::byte* out = b_start + b_bytes;
    std::size_t i = a.size(), j = b.size();
    while (j > 0) {
      const bool take_b = i == 0 || b[j - 1].key > a[i - 1].key;
      const std::int64_t n = (take_b ? b[--j] : a[--i]).length * elem_;
      const std::byte*& src = take_b ? from_b : from_a;
      src -= n;
      out -= n;
      std::memmove(out, src, static_cast<std::size_t>(n));
    }  // the rest of a is already in place
  }

  std::int64_t elem_;
  Scratch scratch_;
};

}  // namespace

void rotate_bytes(std::byte* first, std::byte* middle, std::byte* last, Scratch scratch) {
  for (;;) {
    const std::int64_t left = middle - first, right = last - middle;
    if (left == 0 || right == 0) return;
    if (left <= scratch.bytes) {
      std::memcpy(scratch.data, first, static_cast<std::size_t>(left));
      std::memmove(first, middle, static_cast<std::size_t>(right));
      std::memcpy(first + right, scratch.data, static_cast<std::size_t>(left));
      return;
    }
    if (right <= scratch.bytes) {
      std::memcpy(scratch.data, middle, static_cast<std::size_t>(right));
      std::memmove(first + right, first, static_cast<std::size_t>(left));
      std::memcpy(first, scratch.data, static_cast<std::size_t>(right));
      return;
    }
    if (left <= right) {  // the first `left` bytes of the right part are final
      swap_ranges(first, middle, left, scratch);
      first = middle;
      middle += left;
    } else {  // the right part lands at the front
      swap_ranges(first, middle, right, scratch);
      first += right;
    }
  }
}

Runs merge_runs(std::byte* base, std::int64_t elem_size, std::span<const Run> left,
                std::span<const Run> right, Scratch scratch) {
  RunMerger(elem_size, scratch).merge(base, left, right);
  return merge_run_lists(left, right);
}

}  // namespace a2av::inplace
