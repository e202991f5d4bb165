// Google Benchmark of the in-place stable merge (src/inplace/merge.hpp; Zhuang et al.,
// Section 3.1) against std::inplace_merge (which takes a temporary buffer of n / 2 when it
// can get one) and out-of-place std::merge, for 8-byte keys whose two halves are sorted.
//
// Sizes 1e3..1e7 run by default. 1e8 (800 MB per array, 1.6 GB for std::merge) is
// registered under the name suffix "/huge" and only runs when asked for, e.g.
//   ./merge_bench --benchmark_filter='huge'
#include "inplace/merge.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace {

std::vector<std::uint64_t> sorted_halves(std::size_t n) {
  std::mt19937_64 rng(42);
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = rng();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::sort(v.begin(), mid);
  std::sort(mid, v.end());
  return v;
}

// Each iteration merges a fresh copy of the input; the copy is not timed.
template <class Merge>
void run(benchmark::State& state, Merge merge) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<std::uint64_t> input = sorted_halves(n);
  std::vector<std::uint64_t> data(n);
  for (auto _ : state) {
    state.PauseTiming();
    std::copy(input.begin(), input.end(), data.begin());
    state.ResumeTiming();
    merge(data);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

void BM_a2av_inplace_merge(benchmark::State& state) {
  run(state, [](std::vector<std::uint64_t>& v) {
    a2av::inplace_merge(std::span<std::uint64_t>(v), v.size() / 2, std::less<>());
  });
}

void BM_std_inplace_merge(benchmark::State& state) {
  run(state, [](std::vector<std::uint64_t>& v) {
    std::inplace_merge(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  });
}

void BM_std_merge(benchmark::State& state) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(state.range(0)));
  run(state, [&out](std::vector<std::uint64_t>& v) {
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::merge(v.begin(), mid, mid, v.end(), out.begin());
  });
}

constexpr std::int64_t kHuge = 100'000'000;

void sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t n = 1000; n <= 10'000'000; n *= 10) b->Arg(n);
  b->Unit(benchmark::kMicrosecond);
}

void huge(benchmark::internal::Benchmark* b) {
  b->Arg(kHuge)->Unit(benchmark::kMillisecond)->Iterations(3);
}

BENCHMARK(BM_a2av_inplace_merge)->Apply(sizes);
BENCHMARK(BM_std_inplace_merge)->Apply(sizes);
BENCHMARK(BM_std_merge)->Apply(sizes);

// The default filter runs everything registered, so the 1e8 runs are registered only when the
// filter names them.
bool filter_asks_for_huge(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.starts_with("--benchmark_filter=") && arg.find("huge") != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

void register_huge() {
  benchmark::RegisterBenchmark("BM_a2av_inplace_merge/huge", BM_a2av_inplace_merge)->Apply(huge);
  benchmark::RegisterBenchmark("BM_std_inplace_merge/huge", BM_std_inplace_merge)->Apply(huge);
  benchmark::RegisterBenchmark("BM_std_merge/huge", BM_std_merge)->Apply(huge);
}

}  // namespace

int main(int argc, char** argv) {
  if (filter_asks_for_huge(argc, argv)) register_huge();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
