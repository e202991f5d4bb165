// The FFT's input and its two checks (TuNA paper, Section VI-A, verified independently):
// against FFTW's own MPI transform of the same input, and forward-then-backward round trip.
#pragma once

#include "layout.hpp"

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace fft {

// A seeded function of the global index, so every rank makes its own part of the input
// and the checks can remake any element without keeping a copy.
cplx input_value(std::uint64_t seed, std::int64_t global_index);
void fill_input(std::vector<cplx>& data, const Layout& layout, std::uint64_t seed);

// Relative L2 distance between `data` (stored as `layout`) and FFTW MPI's forward transform
// of the input; the same on every rank. Gathers both results to rank 0: for checking only.
double error_vs_fftw_mpi(const std::vector<cplx>& data, const Layout& layout, std::uint64_t seed,
                         MPI_Comm comm);

// Relative L2 distance between data / (n0 n1 n2) and the input; the same on every rank.
double roundtrip_error(const std::vector<cplx>& data, const Layout& layout, std::uint64_t seed,
                       MPI_Comm comm);

}  // namespace fft
