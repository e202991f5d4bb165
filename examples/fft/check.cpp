// Input generation and the checks of the distributed FFT (TuNA paper, Section VI-A).
#include "check.hpp"

#include <fftw3-mpi.h>

#include <cmath>
#include <stdexcept>

namespace fft {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double unit(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;
}

// The whole array on rank 0 (empty elsewhere), each element at its global row-major index.
std::vector<cplx> gather_global(const cplx* data, const Layout& layout, MPI_Comm comm) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const int count = static_cast<int>(layout.size());
  std::vector<std::int64_t> index(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) index[i] = layout.global_index(i);
  std::vector<int> counts(size), displs(size);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::int64_t total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
  }
  const std::size_t n = rank == 0 ? static_cast<std::size_t>(total) : 0;
  std::vector<std::int64_t> all_index(n);
  std::vector<cplx> all_values(n);
  MPI_Gatherv(index.data(), count, MPI_INT64_T, all_index.data(), counts.data(), displs.data(),
              MPI_INT64_T, 0, comm);
  MPI_Gatherv(data, count, MPI_C_DOUBLE_COMPLEX, all_values.data(), counts.data(), displs.data(),
              MPI_C_DOUBLE_COMPLEX, 0, comm);
  std::vector<cplx> global(n);
  for (std::size_t i = 0; i < n; ++i) global[all_index[i]] = all_values[i];
  return global;
}

// sqrt(sum |a-b|^2 / sum |b|^2) of two partial sums, over all ranks.
double relative_l2(double diff2, double ref2, MPI_Comm comm) {
  double sums[2] = {diff2, ref2};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  return sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
}

}  // namespace

cplx input_value(std::uint64_t seed, std::int64_t global_index) {
  const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(global_index)));
  return {unit(h), unit(splitmix64(h))};
}

void fill_input(std::vector<cplx>& data, const Layout& layout, std::uint64_t seed) {
  if (data.size() < static_cast<std::size_t>(layout.size()))
    data.resize(static_cast<std::size_t>(layout.size()));
  for (std::int64_t i = 0; i < layout.size(); ++i)
    data[i] = input_value(seed, layout.global_index(i));
}

double error_vs_fftw_mpi(const std::vector<cplx>& data, const Layout& layout, std::uint64_t seed,
                         MPI_Comm comm) {
  const Shape& n = layout.n;
  ptrdiff_t local_n0 = 0, local_start = 0;
  const ptrdiff_t alloc = fftw_mpi_local_size_3d(n[0], n[1], n[2], comm, &local_n0, &local_start);
  fftw_complex* buffer = fftw_alloc_complex(alloc > 0 ? alloc : 1);
  fftw_plan plan =
      fftw_mpi_plan_dft_3d(n[0], n[1], n[2], buffer, buffer, comm, FFTW_FORWARD, FFTW_ESTIMATE);
  if (!plan) throw std::runtime_error("FFTW MPI could not plan the reference transform");
  const Layout reference_layout{n, {Range{local_start, local_n0}, Range{0, n[1]}, Range{0, n[2]}}};
  auto* reference = reinterpret_cast<cplx*>(buffer);
  for (std::int64_t i = 0; i < reference_layout.size(); ++i)
    reference[i] = input_value(seed, reference_layout.global_index(i));
  fftw_execute(plan);
  const std::vector<cplx> expected = gather_global(reference, reference_layout, comm);
  fftw_destroy_plan(plan);
  fftw_free(buffer);

  const std::vector<cplx> got = gather_global(data.data(), layout, comm);
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff2 += std::norm(got[i] - expected[i]);
    ref2 += std::norm(expected[i]);
  }
  return relative_l2(diff2, ref2, comm);
}

double roundtrip_error(const std::vector<cplx>& data, const Layout& layout, std::uint64_t seed,
                       MPI_Comm comm) {
  const double scale = 1.0 / static_cast<double>(layout.n[0] * layout.n[1] * layout.n[2]);
  double diff2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < layout.size(); ++i) {
    const cplx expected = input_value(seed, layout.global_index(i));
    diff2 += std::norm(data[i] * scale - expected);
    ref2 += std::norm(expected);
  }
  return relative_l2(diff2, ref2, comm);
}

}  // namespace fft
