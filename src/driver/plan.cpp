// a2av::Plan: prepare once (checks, agreement, choice, layout), execute many times.
#include <a2av/plan.hpp>

#include "core/comm_context.hpp"
#include "driver/alltoallv.hpp"

#include <vector>

namespace a2av {

struct Plan::State {
  std::vector<MPI_Count> sendcounts, recvcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  Call call;
  MemoryTracker memory;  // before `prepared`, which allocates from it
  Prepared prepared;
  ContextPin pin;  // the plan may outlive its communicator's MPI_Comm_free

  State(const Call& user, std::size_t size, std::string_view spec_text, bool validate)
      : sendcounts(copy(user.sendcounts, size)),
        recvcounts(copy(user.recvcounts, size)),
        sdispls(copy(user.sdispls, size)),
        rdispls(copy(user.rdispls, size)),
        call{user.sendbuf,
             data_or_null(sendcounts),
             data_or_null(sdispls),
             user.sendtype,
             user.recvbuf,
             data_or_null(recvcounts),
             data_or_null(rdispls),
             user.recvtype,
             user.comm,
             user.rejected},  // a rejected call throws here: nothing dangles
        prepared(prepare_alltoallv(call, spec_text, validate, false, memory)),
        pin(*prepared.ctx) {}

  template <class T>
  static std::vector<T> copy(const T* values, std::size_t n) {
    return values ? std::vector<T>(values, values + n) : std::vector<T>();
  }
  template <class T>
  static const T* data_or_null(const std::vector<T>& v) {
    return v.empty() ? nullptr : v.data();
  }
};

Plan::Plan(const void* sendbuf, std::span<const MPI_Count> sendcounts,
           std::span<const MPI_Aint> sdispls, MPI_Datatype sendtype, void* recvbuf,
           std::span<const MPI_Count> recvcounts, std::span<const MPI_Aint> rdispls,
           MPI_Datatype recvtype, MPI_Comm comm, const Options& options) {
  const auto size = static_cast<std::size_t>(comm_context(comm).size);
  std::string rejected;  // if set, the ranks agree on the error in State
  const Call user = call_from_spans(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm, rejected);
  state_ = std::make_unique<State>(user, size, options.algorithm, options.validate);
}

Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;
Plan::~Plan() = default;

void Plan::run() {
  State& s = *state_;
  execute(s.call, s.prepared, s.memory);
}

std::string Plan::algorithm() const {
  const CommContext& ctx = *state_->prepared.ctx;
  return describe(*state_->prepared.spec,
                  {ctx.size, ctx.node_size, ctx.uniform_nodes, state_->prepared.uniform_blocks});
}

std::int64_t Plan::peak_temp_bytes() const {
  return state_->memory.peak();
}

}  // namespace a2av
