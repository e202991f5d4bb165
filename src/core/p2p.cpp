#include "core/p2p.hpp"

#include "core/check.hpp"

#include <algorithm>
#include <cstdlib>

namespace a2av {
namespace {

template <class Post>
void for_each_piece(std::int64_t bytes, Post post) {
  const std::int64_t piece = max_piece();
  for (std::int64_t done = 0; done < bytes; done += piece)
    post(done, static_cast<int>(std::min(piece, bytes - done)));
}

// MPICH raises errors of request completion (a truncated receive) on MPI_COMM_WORLD's
// handler, not the request's communicator, so a wait would abort by default there. While
// a2av waits, MPI_COMM_WORLD returns errors instead; its handler is restored afterwards.
class WorldErrorsReturn {
 public:
#if defined(MPICH_VERSION)
  WorldErrorsReturn() {
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~WorldErrorsReturn() {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved_);
    MPI_Errhandler_free(&saved_);
  }

 private:
  MPI_Errhandler saved_;
#endif
};

}  // namespace

std::int64_t max_piece() {
  static const std::int64_t piece = [] {
    const char* text = std::getenv("A2AV_MAX_MESSAGE");
    const std::int64_t value = text ? std::atoll(text) : 0;
    return value >= 64 && value <= (std::int64_t{1} << 30) ? value : std::int64_t{1} << 30;
  }();
  return piece;
}

void Requests::isend(const void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm) {
  const auto* base = static_cast<const std::byte*>(data);
  for_each_piece(bytes, [&](std::int64_t at, int n) {
    requests_.push_back(MPI_REQUEST_NULL);
    expected_.push_back(-1);
    check_mpi(MPI_Isend(base + at, n, MPI_BYTE, peer, tag, comm, &requests_.back()), "MPI_Isend");
  });
}

void Requests::irecv(void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm) {
  auto* base = static_cast<std::byte*>(data);
  for_each_piece(bytes, [&](std::int64_t at, int n) {
    requests_.push_back(MPI_REQUEST_NULL);
    expected_.push_back(n);
    check_mpi(MPI_Irecv(base + at, n, MPI_BYTE, peer, tag, comm, &requests_.back()), "MPI_Irecv");
  });
}

void Mismatch::raise() const {
  if (!message_.empty()) throw Error(A2AV_ERR_COUNTS, message_);
}

void Requests::adopt(MPI_Request request, std::int64_t expected_bytes) {
  requests_.push_back(request);
  expected_.push_back(expected_bytes);
}

void Requests::wait_all(Mismatch& mismatch) {
  std::vector<MPI_Status> statuses(requests_.size());
  [[maybe_unused]] const WorldErrorsReturn guard;
  const int rc = MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), statuses.data());
  const auto expected = std::move(expected_);
  auto requests = std::move(requests_);
  requests_.clear();
  expected_.clear();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    MPI_Status& status = statuses[i];
    if (rc == MPI_ERR_IN_STATUS && status.MPI_ERROR != MPI_SUCCESS) {
      int error_class = 0;
      MPI_Error_class(status.MPI_ERROR, &error_class);
      if (error_class == MPI_ERR_PENDING) {  // not failed, not done: another one failed
        check_mpi(MPI_Wait(&requests[i], &status), "MPI_Wait");
      } else if (error_class == MPI_ERR_TRUNCATE) {
        mismatch.note(fmt::format("rank {} sent more bytes than the receive count allows",
                                  status.MPI_SOURCE));
        continue;
      } else {
        check_mpi(status.MPI_ERROR, "MPI_Waitall");
      }
    }
    if (expected[i] < 0) continue;
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got != expected[i])
      mismatch.note(fmt::format("rank {} sent {} bytes where the receive count says {}",
                                status.MPI_SOURCE, got, expected[i]));
  }
  if (rc != MPI_ERR_IN_STATUS) check_mpi(rc, "MPI_Waitall");
}

void sendrecv(const void* send, std::int64_t send_bytes, int dest, void* recv,
              std::int64_t recv_bytes, int source, int tag, MPI_Comm comm, Mismatch& mismatch) {
  Requests requests;
  requests.irecv(recv, recv_bytes, source, tag, comm);
  requests.isend(send, send_bytes, dest, tag, comm);
  requests.wait_all(mismatch);
}

}  // namespace a2av
