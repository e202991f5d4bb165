// A distributed 3-D complex-to-complex FFT: serial 1-D FFTW transforms along each axis while
// it is whole on every rank, with transposes between them (TuNA paper, Section VI-A).
//  - slab: ranks split x; FFT z and y, one transpose over all ranks (x whole, y split),
//    FFT x.
//  - pencil: ranks form an R x C grid and split x over R and y over C; FFT z, transpose in
//    each grid row (y whole, z split), FFT y, transpose in each grid column (x whole, y
//    split), FFT x. Two smaller all-to-alls instead of one, so more than n ranks can work.
// The backward transform runs the stages in reverse and is unnormalized, as FFTW's.
#pragma once

#include "exchange.hpp"
#include "layout.hpp"
#include "transpose.hpp"

#include <fftw3.h>
#include <mpi.h>

#include <array>
#include <memory>
#include <vector>

namespace fft {

enum class Decomposition { slab, pencil };

class DistributedFft {
 public:
  // grid: ranks per x and y split for pencil ({0, 0}: MPI_Dims_create); ignored for slab.
  DistributedFft(Shape n, Decomposition decomposition, std::array<int, 2> grid, MPI_Comm comm);
  ~DistributedFft();
  DistributedFft(const DistributedFft&) = delete;
  DistributedFft& operator=(const DistributedFft&) = delete;

  const std::array<int, 2>& grid() const { return grid_; }
  const Layout& input_layout() const { return forward_.front().before; }
  const Layout& output_layout() const { return forward_.back().after; }
  // The layout backward() leaves: the input's box, its axes possibly in another order.
  const Layout& backward_layout() const { return backward_.back().after; }
  // Elements every rank's buffer must hold for in-place exchanges (max over all ranks).
  std::int64_t capacity() const { return capacity_; }

  // data holds input_layout() (in place: capacity() elements); on return output_layout().
  void forward(std::vector<cplx>& data, Exchange& exchange) {
    run(forward_, FFTW_FORWARD, data, exchange);
  }
  // data holds output_layout(); on return backward_layout(), times n0*n1*n2.
  void backward(std::vector<cplx>& data, Exchange& exchange) {
    run(backward_, FFTW_BACKWARD, data, exchange);
  }

 private:
  struct Stage {
    Layout before, after;
    int axis = -1;                         // FFT along this axis, or
    std::unique_ptr<Transpose> transpose;  // a transpose
    fftw_plan plan = nullptr;              // made on first use, for the buffer then given
  };
  struct Step {  // a stage before layouts are known: FFT along axis, or transpose on comm
    int axis = -1;
    MPI_Comm comm = MPI_COMM_NULL;
    int axis_in = -1, axis_out = -1;
  };

  static std::vector<Stage> build(const Layout& start, const std::vector<Step>& steps);
  void run(std::vector<Stage>& stages, int sign, std::vector<cplx>& data, Exchange& exchange);
  void transform(Stage& stage, cplx* data, int sign);

  std::array<int, 2> grid_{};
  MPI_Comm row_ = MPI_COMM_NULL, column_ = MPI_COMM_NULL;
  std::vector<Stage> forward_, backward_;
  std::vector<cplx> scratch_;
  std::int64_t capacity_ = 0;
};

}  // namespace fft
