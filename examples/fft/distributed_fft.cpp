// Slab and pencil 3-D FFTs from serial 1-D FFTW transforms and a2av transposes (TuNA paper,
// Section VI-A).
#include "distributed_fft.hpp"

#include <algorithm>
#include <stdexcept>

namespace fft {

DistributedFft::DistributedFft(Shape n, Decomposition decomposition, std::array<int, 2> grid,
                               MPI_Comm comm) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (decomposition == Decomposition::slab) grid = {size, 1};
  if (grid[0] == 0 && grid[1] == 0) MPI_Dims_create(size, 2, grid.data());
  if (grid[0] * grid[1] != size)
    throw std::invalid_argument("the process grid must have as many ranks as the job");
  grid_ = grid;
  const int a = rank / grid[1], b = rank % grid[1];
  MPI_Comm_split(comm, a, b, &row_);     // same x block, ranks split y
  MPI_Comm_split(comm, b, a, &column_);  // same y block, ranks split x

  Layout start{n, {block_range(n[0], grid[0], a), block_range(n[1], grid[1], b), {0, n[2]}}};
  std::vector<Step> steps{{.axis = 2}};
  if (decomposition == Decomposition::pencil)
    steps.push_back({.comm = row_, .axis_in = 1, .axis_out = 2});
  steps.push_back({.axis = 1});
  steps.push_back({.comm = column_, .axis_in = 0, .axis_out = 1});
  steps.push_back({.axis = 0});
  forward_ = build(start, steps);

  std::reverse(steps.begin(), steps.end());
  for (Step& s : steps) std::swap(s.axis_in, s.axis_out);
  backward_ = build(output_layout(), steps);

  for (const auto* stages : {&forward_, &backward_})
    for (const Stage& s : *stages)
      capacity_ = std::max({capacity_, s.before.size(), s.after.size()});
  MPI_Allreduce(MPI_IN_PLACE, &capacity_, 1, MPI_INT64_T, MPI_MAX, comm);
}

DistributedFft::~DistributedFft() {
  for (auto* stages : {&forward_, &backward_})
    for (Stage& s : *stages)
      if (s.plan) fftw_destroy_plan(s.plan);
  MPI_Comm_free(&row_);
  MPI_Comm_free(&column_);
}

std::vector<DistributedFft::Stage> DistributedFft::build(const Layout& start,
                                                         const std::vector<Step>& steps) {
  std::vector<Stage> stages;
  Layout layout = start;
  for (const Step& step : steps) {
    Stage& s = stages.emplace_back();
    s.before = layout;
    s.axis = step.axis;
    if (step.comm != MPI_COMM_NULL) {
      s.transpose = std::make_unique<Transpose>(layout, step.axis_in, step.axis_out, step.comm);
      layout = s.transpose->after();
    }
    s.after = layout;
  }
  return stages;
}

void DistributedFft::run(std::vector<Stage>& stages, int sign, std::vector<cplx>& data,
                         Exchange& exchange) {
  // The in-place engine needs every rank's buffer to hold the largest block set of all.
  if (exchange.inplace() && data.size() < static_cast<std::size_t>(capacity_))
    data.resize(static_cast<std::size_t>(capacity_));
  for (Stage& s : stages) {
    if (s.transpose)
      s.transpose->run(data, scratch_, exchange);
    else
      transform(s, data.data(), sign);
  }
}

// All 1-D transforms along one axis in one FFTW guru plan: the other two axes are its loops.
void DistributedFft::transform(Stage& stage, cplx* data, int sign) {
  const Layout& layout = stage.before;
  if (layout.size() == 0) return;  // an idle rank (n smaller than the rank count)
  auto* p = reinterpret_cast<fftw_complex*>(data);
  if (!stage.plan) {
    const Shape stride = layout.strides();
    const int axis = stage.axis;
    const fftw_iodim64 dim{layout.n[axis], stride[axis], stride[axis]};
    fftw_iodim64 loops[2];
    int k = 0;
    for (int other = 0; other < 3; ++other)
      if (other != axis) loops[k++] = {layout.box[other].count, stride[other], stride[other]};
    // Unaligned: later calls pass other buffers (vectors are swapped and resized).
    stage.plan =
        fftw_plan_guru64_dft(1, &dim, 2, loops, p, p, sign, FFTW_ESTIMATE | FFTW_UNALIGNED);
    if (!stage.plan) throw std::runtime_error("FFTW could not plan a 1-D transform");
  }
  fftw_execute_dft(stage.plan, p, p);
}

}  // namespace fft
