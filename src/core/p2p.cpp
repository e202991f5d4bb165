#include "core/p2p.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <cstdlib>

namespace a2av {
namespace {

// In-band tags (core/tags.hpp): a piece with more to follow (kMorePieces), and the error
// tags (kPeerErrors.at(code)). The last (or only) piece of a block carries the algorithm's tag,
// kDirectBlock for the direct algorithms.
static_assert(A2AV_ERR_MPI < tags::kPeerErrors.count, "an error code without an error tag");

bool is_error(int tag) {
  return tags::kPeerErrors.contains(tag);
}
int error_of(int tag) {
  return tags::kPeerErrors.index_of(tag);
}

// Calls post(offset, length, last) per piece; at least one (empty) piece when `at_least_one`.
template <class Post>
void for_each_piece(std::int64_t bytes, bool at_least_one, Post post) {
  const std::int64_t piece = max_piece();
  if (bytes == 0 && at_least_one) return post(0, 0, true);
  for (std::int64_t done = 0; done < bytes; done += piece)
    post(done, static_cast<int>(std::min(piece, bytes - done)), done + piece >= bytes);
}

}  // namespace

std::int64_t max_piece() {
  static const std::int64_t piece = *env_integer("A2AV_MAX_MESSAGE");
  return piece;
}

void PeerErrors::note(int rank, int code) {
  ranks_.push_back(rank);
  if (code > code_ || (code == code_ && rank < rank_)) {
    code_ = code;
    rank_ = rank;
  }
}

void PeerErrors::learn(int rank, int code) {
  if (code > code_ || (code == code_ && code > 0 && rank < rank_)) {
    code_ = code;
    rank_ = rank;
  }
}

bool PeerErrors::from(int rank) const {
  return std::find(ranks_.begin(), ranks_.end(), rank) != ranks_.end();
}

void PeerErrors::raise() const {
  if (code_ != A2AV_SUCCESS)
    fail(code_, "rank {} rejected its arguments: {}", rank_, A2AV_Error_string(code_));
}

void announce_error(MPI_Comm comm, int code, PeerErrors& peers) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::vector<MPI_Request> sends;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    sends.push_back(MPI_REQUEST_NULL);
    check_mpi(
        MPI_Isend(nullptr, 0, MPI_BYTE, peer, tags::kPeerErrors.at(code), comm, &sends.back()),
        "MPI_Isend");
  }
  // Probing without blocking: a peer may be waiting for another peer before it sends here.
  [[maybe_unused]] const WorldErrorsReturn guard;
  std::vector<bool> drained(size, false);
  drained[rank] = true;
  for (int left = size - 1; left > 0;) {
    for (int peer = 0; peer < size; ++peer) {
      ProbedMessage message;
      if (drained[peer] || !ProbedMessage::test(peer, MPI_ANY_TAG, comm, message)) continue;
      message.receive(nullptr);  // truncated: not wanted
      if (is_error(message.tag())) peers.note(peer, error_of(message.tag()));
      if (message.tag() != tags::kMorePieces.tag()) {
        drained[peer] = true;
        --left;
      }
    }
  }
  check_mpi(MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
}

void drain_block(int peer, MPI_Comm comm, PeerErrors& peers) {
  [[maybe_unused]] const WorldErrorsReturn guard;
  for (int tag = tags::kMorePieces.tag(); tag == tags::kMorePieces.tag();) {
    ProbedMessage message = ProbedMessage::wait(peer, MPI_ANY_TAG, comm);
    message.receive(nullptr);  // truncated: not wanted
    tag = message.tag();
    if (is_error(tag)) peers.note(peer, error_of(tag));
  }
}

void drop_pieces(std::int64_t bytes, int peer, int tag, MPI_Comm comm) {
  [[maybe_unused]] const WorldErrorsReturn guard;
  for (std::int64_t left = bytes; left > 0; left -= max_piece()) {
    ProbedMessage::wait(peer, tag, comm).receive(nullptr);  // truncated: not wanted
  }
}

void drop_message(int peer, int tag, MPI_Comm comm) {
  [[maybe_unused]] const WorldErrorsReturn guard;
  ProbedMessage::wait(peer, tag, comm).receive(nullptr);  // truncated: not wanted
}

#ifdef A2AV_SIMULATION
ProbedMessage ProbedMessage::wait(int source, int tag, MPI_Comm comm) {
  ProbedMessage m;
  check_mpi(MPI_Probe(source, tag, comm, &m.status_), "MPI_Probe");
  m.comm_ = comm;
  return m;
}

bool ProbedMessage::test(int source, int tag, MPI_Comm comm, ProbedMessage& found) {
  int flag = 0;
  check_mpi(MPI_Iprobe(source, tag, comm, &flag, &found.status_), "MPI_Iprobe");
  found.comm_ = comm;
  return flag != 0;
}

void ProbedMessage::receive(void* data) {
  // Truncation of a dropped message is wanted: its error is not reported through the status.
  const int rc = MPI_Recv(data, data ? bytes() : 0, MPI_BYTE, status_.MPI_SOURCE, status_.MPI_TAG,
                          comm_, MPI_STATUS_IGNORE);
  if (data) check_mpi(rc, "MPI_Recv");
}
#else
ProbedMessage ProbedMessage::wait(int source, int tag, MPI_Comm comm) {
  ProbedMessage m;
  check_mpi(MPI_Mprobe(source, tag, comm, &m.message_, &m.status_), "MPI_Mprobe");
  return m;
}

bool ProbedMessage::test(int source, int tag, MPI_Comm comm, ProbedMessage& found) {
  int flag = 0;
  check_mpi(MPI_Improbe(source, tag, comm, &flag, &found.message_, &found.status_), "MPI_Improbe");
  return flag != 0;
}

void ProbedMessage::receive(void* data) {
  const int rc = MPI_Mrecv(data, data ? bytes() : 0, MPI_BYTE, &message_, MPI_STATUS_IGNORE);
  if (data) check_mpi(rc, "MPI_Mrecv");
}
#endif

int ProbedMessage::bytes() const {
  int n = 0;
  check_mpi(MPI_Get_count(&status_, MPI_BYTE, &n), "MPI_Get_count");
  return n;
}

void Requests::isend(const void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm) {
  const auto* base = static_cast<const std::byte*>(data);
  for_each_piece(bytes, in_band_, [&](std::int64_t at, int n, bool last) {
    requests_.push_back(MPI_REQUEST_NULL);
    expected_.push_back(-1);
    const int piece_tag = in_band_ && !last ? tags::kMorePieces.tag() : tag;
    check_mpi(MPI_Isend(base + at, n, MPI_BYTE, peer, piece_tag, comm, &requests_.back()),
              "MPI_Isend");
  });
}

void Requests::isend_error(int code, int peer, MPI_Comm comm) {
  requests_.push_back(MPI_REQUEST_NULL);
  expected_.push_back(-1);
  check_mpi(
      MPI_Isend(nullptr, 0, MPI_BYTE, peer, tags::kPeerErrors.at(code), comm, &requests_.back()),
      "MPI_Isend");
}

void Requests::irecv(void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm) {
  auto* base = static_cast<std::byte*>(data);
  if (!in_band_) return post_recv_pieces(base, bytes, peer, tag, comm);
  // The first piece may be an error tag instead; the rest wait until it has come.
  const std::int64_t first = std::min(bytes, max_piece());
  post_recv_pieces(base, first, peer, MPI_ANY_TAG, comm);
  if (bytes > first) rest_.push_back({base + first, bytes - first, peer, comm});
}

void Requests::post_recv_pieces(std::byte* data, std::int64_t bytes, int peer, int tag,
                                MPI_Comm comm) {
  for_each_piece(bytes, in_band_, [&](std::int64_t at, int n, bool) {
    requests_.push_back(MPI_REQUEST_NULL);
    expected_.push_back(n);
    check_mpi(MPI_Irecv(data + at, n, MPI_BYTE, peer, tag, comm, &requests_.back()), "MPI_Irecv");
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
  if (!rest_.empty()) {
    // Receives first, sends held back: a peer's later pieces cannot complete until the rest
    // is posted here, and the same holds for ours there, so waiting on sends now would hang.
    std::vector<MPI_Request> sends;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (expected_[i] < 0) {
        sends.push_back(requests_[i]);
        continue;
      }
      requests_[kept] = requests_[i];
      expected_[kept++] = expected_[i];
    }
    requests_.resize(kept);
    expected_.resize(kept);
    wait_posted(mismatch);
    requests_.assign(sends.begin(), sends.end());
    expected_.assign(sends.size(), -1);
    for (const Rest& r : rest_)
      if (!in_band_->from(r.peer)) post_recv_pieces(r.data, r.bytes, r.peer, MPI_ANY_TAG, r.comm);
    rest_.clear();
  }
  wait_posted(mismatch);
}

void Requests::cancel_all() {
  [[maybe_unused]] const WorldErrorsReturn guard;
  for (MPI_Request& request : requests_)
    if (request != MPI_REQUEST_NULL) check_mpi(MPI_Cancel(&request), "MPI_Cancel");
  check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  requests_.clear();
  expected_.clear();
  rest_.clear();
}

void Requests::wait_posted(Mismatch& mismatch) {
  statuses_.resize(requests_.size());
  [[maybe_unused]] const WorldErrorsReturn guard;
  const int rc =
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), statuses_.data());
  for (std::size_t i = 0; i < expected_.size(); ++i) {
    MPI_Status& status = statuses_[i];
    if (rc == MPI_ERR_IN_STATUS && status.MPI_ERROR != MPI_SUCCESS) {
      int error_class = 0;
      MPI_Error_class(status.MPI_ERROR, &error_class);
      if (error_class == MPI_ERR_PENDING) {  // not failed, not done: another one failed
        check_mpi(MPI_Wait(&requests_[i], &status), "MPI_Wait");
      } else if (error_class == MPI_ERR_TRUNCATE) {
        mismatch.note(fmt::format("rank {} sent more bytes than the receive count allows",
                                  status.MPI_SOURCE));
        continue;
      } else {
        check_mpi(status.MPI_ERROR, "MPI_Waitall");
      }
    }
    if (expected_[i] < 0) continue;
    if (in_band_ && is_error(status.MPI_TAG)) {
      in_band_->note(status.MPI_SOURCE, error_of(status.MPI_TAG));
      continue;
    }
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got != expected_[i])
      mismatch.note(fmt::format("rank {} sent {} bytes where the receive count says {}",
                                status.MPI_SOURCE, got, expected_[i]));
  }
  requests_.clear();
  expected_.clear();
  if (rc != MPI_ERR_IN_STATUS) check_mpi(rc, "MPI_Waitall");
}

void sendrecv(const void* send, std::int64_t send_bytes, int dest, void* recv,
              std::int64_t recv_bytes, int source, int tag, MPI_Comm comm, Mismatch& mismatch,
              PeerErrors* in_band) {
  Requests requests(in_band);
  requests.irecv(recv, recv_bytes, source, tag, comm);
  requests.isend(send, send_bytes, dest, tag, comm);
  requests.wait_all(mismatch);
}

}  // namespace a2av
