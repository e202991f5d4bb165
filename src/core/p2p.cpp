#include "core/p2p.hpp"

#include "core/check.hpp"
#include "core/environment.hpp"
#include "core/per_thread.hpp"
#include "core/tags.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

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
  // The error's tag goes to rank+1, rank+2, ... (spread_out's order), at most the bound in
  // flight; a rank without room goes on draining, which is what its peers' sends need.
  std::vector<MPI_Request> sends(std::min(size - 1, std::max(1, InFlight::limit())),
                                 MPI_REQUEST_NULL);
  std::vector<int> done(sends.size());
  int next_step = 1, in_flight = 0;
  const auto send_more = [&] {
    int completed = 0;
    if (in_flight > 0)
      check_mpi(MPI_Testsome(static_cast<int>(sends.size()), sends.data(), &completed, done.data(),
                             MPI_STATUSES_IGNORE),
                "MPI_Testsome");
    if (completed == MPI_UNDEFINED) completed = 0;
    in_flight -= completed;
    InFlight::ended(completed);
    for (MPI_Request& slot : sends) {
      if (slot != MPI_REQUEST_NULL || next_step == size) continue;
      const int peer = (rank + next_step++) % size;
      check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, peer, tags::kPeerErrors.at(code), comm, &slot),
                "MPI_Isend");
      ++in_flight;
      InFlight::posted(1);
    }
  };
  // Probing without blocking: a peer may be waiting for another peer before it sends here.
  [[maybe_unused]] const WorldErrorsReturn guard;
  std::vector<bool> drained(size, false);
  drained[rank] = true;
  for (int left = size - 1; left > 0 || next_step < size;) {
    send_more();
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
  InFlight::ended(in_flight);
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

namespace {

struct InFlightState {
  int limit = InFlight::default_limit();
  int active = 0;
  int high = 0;
  int last_call = 0;  // the high-water mark of the last scope that ended
};

InFlightState& in_flight_state() {
  return per_thread<InFlightState>();
}

}  // namespace

int InFlight::default_limit() {
  static const int limit = static_cast<int>(*env_integer("A2AV_MAX_IN_FLIGHT"));
  return limit;
}
int InFlight::limit() {
  return in_flight_state().limit;
}
int InFlight::high_water() {
  return in_flight_state().high;
}
void InFlight::posted(int count) {
  InFlightState& state = in_flight_state();
  state.active += count;
  state.high = std::max(state.high, state.active);
}
void InFlight::ended(int count) {
  in_flight_state().active -= count;
}
int InFlight::take_last_call() {
  return std::exchange(in_flight_state().last_call, 0);
}

InFlightScope::InFlightScope(int limit) {
  InFlightState& state = in_flight_state();
  saved_limit_ = state.limit;
  saved_high_ = state.high;
  state.limit = limit > 0 ? limit : InFlight::default_limit();
  state.high = state.active;
}

InFlightScope::~InFlightScope() {
  InFlightState& state = in_flight_state();
  state.last_call = state.high;
  state.limit = saved_limit_;
  state.high = std::max(saved_high_, state.high);
}

void Requests::make_room() {
  while (active_ >= limit_) complete_some();
}

void Requests::push(MPI_Request request, std::int64_t expected, int receive) {
  requests_.push_back(request);
  expected_.push_back(expected);
  receive_of_.push_back(receive);
  ++active_;
  InFlight::posted(1);
}

void Requests::post_send_piece(const std::byte* data, std::int64_t at, std::int64_t bytes, int peer,
                               int tag, MPI_Comm comm) {
  const int n = static_cast<int>(std::min(max_piece(), bytes - at));
  const int piece_tag = in_band_ && at + n < bytes ? tags::kMorePieces.tag() : tag;
  make_room();
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(data + at, n, MPI_BYTE, peer, piece_tag, comm, &request), "MPI_Isend");
  push(request, -1, -1);
}

void Requests::post_recv_piece(std::byte* data, std::int64_t at, std::int64_t bytes, int peer,
                               int tag, MPI_Comm comm) {
  const int n = static_cast<int>(std::min(max_piece(), bytes - at));
  make_room();
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(data + at, n, MPI_BYTE, peer, tag, comm, &request), "MPI_Irecv");
  push(request, n, -1);
}

void Requests::start_in_band_receive(void* data, std::int64_t bytes, int peer, MPI_Comm comm) {
  in_band_receives_.push_back({static_cast<std::byte*>(data), bytes, 0, peer, comm});
  make_room();
  post_in_band_piece(static_cast<int>(in_band_receives_.size()) - 1);
}

void Requests::post_in_band_piece(int receive) {
  const InBandReceive& r = in_band_receives_[receive];
  const int n = static_cast<int>(std::clamp<std::int64_t>(r.bytes - r.next, 0, max_piece()));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(n > 0 ? r.data + r.next : r.data, n, MPI_BYTE, r.peer, MPI_ANY_TAG, r.comm,
                      &request),
            "MPI_Irecv");
  push(request, n, receive);
}

void Requests::isend(const void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm) {
  const auto* base = static_cast<const std::byte*>(data);
  for_each_piece(bytes, in_band_, [&](std::int64_t at, int, bool) {
    post_send_piece(base, at, bytes, peer, tag, comm);
  });
}

void Requests::isend_error(int code, int peer, MPI_Comm comm) {
  make_room();
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, peer, tags::kPeerErrors.at(code), comm, &request),
            "MPI_Isend");
  push(request, -1, -1);
}

void Requests::irecv(void* data, std::int64_t bytes, int peer, int tag, MPI_Comm comm) {
  if (in_band_) return start_in_band_receive(data, bytes, peer, comm);
  auto* base = static_cast<std::byte*>(data);
  for_each_piece(bytes, false, [&](std::int64_t at, int, bool) {
    post_recv_piece(base, at, bytes, peer, tag, comm);
  });
}

void Requests::exchange(void* recv, std::int64_t recv_bytes, int from, const void* send,
                        std::int64_t send_bytes, int to, int tag, MPI_Comm comm) {
  auto* in = static_cast<std::byte*>(recv);
  const auto* out = static_cast<const std::byte*>(send);
  // In band the receive's pieces follow one another by themselves.
  if (in_band_) start_in_band_receive(recv, recv_bytes, from, comm);
  const std::int64_t recvs = in_band_ ? 0 : requests_for(recv_bytes);
  const std::int64_t sends = requests_for(send_bytes);
  for (std::int64_t k = 0; k < std::max(recvs, sends); ++k) {
    if (k < recvs) post_recv_piece(in, k * max_piece(), recv_bytes, from, tag, comm);
    if (k < sends) post_send_piece(out, k * max_piece(), send_bytes, to, tag, comm);
  }
}

std::int64_t pieces_of(std::int64_t bytes) {
  return (bytes + max_piece() - 1) / max_piece();
}

std::int64_t Requests::requests_for(std::int64_t bytes) const {
  const std::int64_t pieces = pieces_of(bytes);
  return in_band_ ? std::max<std::int64_t>(1, pieces) : pieces;
}

void Mismatch::raise() const {
  if (!message_.empty()) throw Error(code_, message_);
}

void Requests::adopt(MPI_Request request, std::int64_t expected_bytes) {
  make_room();
  push(request, expected_bytes, -1);
}

void Requests::complete_some(bool wait) {
  statuses_.resize(requests_.size());
  indices_.resize(requests_.size());
  int done = 0;
  [[maybe_unused]] const WorldErrorsReturn guard;
  const int count = static_cast<int>(requests_.size());
  const int rc =
      wait ? MPI_Waitsome(count, requests_.data(), &done, indices_.data(), statuses_.data())
           : MPI_Testsome(count, requests_.data(), &done, indices_.data(), statuses_.data());
  if (rc != MPI_ERR_IN_STATUS) check_mpi(rc, wait ? "MPI_Waitsome" : "MPI_Testsome");
  if (done == MPI_UNDEFINED) fail(A2AV_ERR_MPI, "a2av: waited with no request in flight");
  active_ -= done;
  InFlight::ended(done);
  for (int k = 0; k < done; ++k)
    settle(static_cast<std::size_t>(indices_[k]), statuses_[k], rc == MPI_ERR_IN_STATUS);
  if (2 * static_cast<std::size_t>(active_) < requests_.size()) compact();
}

// Notes what a completed request shows: a truncated or short receive, a peer's error tag.
void Requests::settle(std::size_t i, MPI_Status& status, bool in_status) {
  const bool truncated = in_status && status.MPI_ERROR != MPI_SUCCESS;
  if (truncated) {
    int error_class = 0;
    MPI_Error_class(status.MPI_ERROR, &error_class);
    if (error_class != MPI_ERR_TRUNCATE) check_mpi(status.MPI_ERROR, "a request");
    noted_.note(
        fmt::format("rank {} sent more bytes than the receive count allows", status.MPI_SOURCE));
  }
  if (expected_[i] < 0) return;
  if (receive_of_[i] >= 0) return settle_in_band(i, status, truncated);
  int got = 0;
  MPI_Get_count(&status, MPI_BYTE, &got);
  if (!truncated && got != expected_[i])
    noted_.note(fmt::format("rank {} sent {} bytes where the receive count says {}",
                            status.MPI_SOURCE, got, expected_[i]));
}

// A piece of an in-band receive: the peer's error, or data; if the peer's tag says more
// pieces follow, the next is posted, into the block or, past its end, to be dropped.
void Requests::settle_in_band(std::size_t i, const MPI_Status& status, bool truncated) {
  InBandReceive& r = in_band_receives_[receive_of_[i]];
  if (is_error(status.MPI_TAG)) return in_band_->note(status.MPI_SOURCE, error_of(status.MPI_TAG));
  int got = 0;
  MPI_Get_count(&status, MPI_BYTE, &got);
  const bool more = status.MPI_TAG == tags::kMorePieces.tag();
  if (!truncated && (got != expected_[i] || (!more && r.next + got < r.bytes)))
    noted_.note(fmt::format("rank {} sent {} bytes where the receive count says {}",
                            status.MPI_SOURCE, r.next + got, r.bytes));
  r.next += expected_[i];
  if (more) post_in_band_piece(receive_of_[i]);
}

int Requests::test_some() {
  if (active_ > 0) complete_some(false);
  return active_;
}

void Requests::compact() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    requests_[kept] = requests_[i];
    expected_[kept] = expected_[i];
    receive_of_[kept++] = receive_of_[i];
  }
  requests_.resize(kept);
  expected_.resize(kept);
  receive_of_.resize(kept);
}

void Requests::wait_all(Mismatch& mismatch) {
  wait_posted();
  in_band_receives_.clear();
  mismatch.absorb(noted_);
  noted_ = Mismatch();
}

void Requests::cancel_all() {
  [[maybe_unused]] const WorldErrorsReturn guard;
  for (MPI_Request& request : requests_)
    if (request != MPI_REQUEST_NULL) check_mpi(MPI_Cancel(&request), "MPI_Cancel");
  check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  InFlight::ended(active_);
  active_ = 0;
  requests_.clear();
  expected_.clear();
  receive_of_.clear();
  in_band_receives_.clear();
}

void Requests::wait_posted() {
  [[maybe_unused]] const WorldErrorsReturn guard;
  // An in-band receive posts its next piece only when the last has come, and a peer's send
  // of that piece completes only then: waiting for all at once could deadlock.
  while (!in_band_receives_.empty() && active_ > 0) complete_some();
  compact();
  while (!requests_.empty()) {
    const std::size_t n = requests_.size();
    statuses_.resize(n);
    const int rc = MPI_Waitall(static_cast<int>(n), requests_.data(), statuses_.data());
    if (rc != MPI_ERR_IN_STATUS) check_mpi(rc, "MPI_Waitall");
    active_ -= static_cast<int>(n);
    InFlight::ended(static_cast<int>(n));
    for (std::size_t i = 0; i < n; ++i) {
      MPI_Status& status = statuses_[i];
      bool in_status = rc == MPI_ERR_IN_STATUS;
      if (in_status && status.MPI_ERROR != MPI_SUCCESS) {
        int error_class = 0;
        MPI_Error_class(status.MPI_ERROR, &error_class);
        if (error_class == MPI_ERR_PENDING) {  // not failed, not done: another one failed
          const int wait_rc = MPI_Wait(&requests_[i], &status);
          status.MPI_ERROR = wait_rc;
          in_status = wait_rc != MPI_SUCCESS;
        }
      }
      settle(i, status, in_status);  // may post an in-band receive's next piece
    }
    requests_.erase(requests_.begin(), requests_.begin() + n);
    expected_.erase(expected_.begin(), expected_.begin() + n);
    receive_of_.erase(receive_of_.begin(), receive_of_.begin() + n);
  }
}

int wait_all_settled(std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses) {
  statuses.resize(requests.size());
  const int rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
  if (rc != MPI_ERR_IN_STATUS) return rc;
  for (std::size_t k = 0; k < requests.size(); ++k) {
    int error_class = MPI_SUCCESS;
    MPI_Error_class(statuses[k].MPI_ERROR, &error_class);
    if (error_class == MPI_ERR_PENDING)
      statuses[k].MPI_ERROR = MPI_Wait(&requests[k], &statuses[k]);
  }
  return rc;
}

void sendrecv(const void* send, std::int64_t send_bytes, int dest, void* recv,
              std::int64_t recv_bytes, int source, int tag, MPI_Comm comm, Mismatch& mismatch,
              PeerErrors* in_band) {
  Requests requests(in_band, InFlight::limit());
  requests.exchange(recv, recv_bytes, source, send, send_bytes, dest, tag, comm);
  requests.wait_all(mismatch);
}

}  // namespace a2av
