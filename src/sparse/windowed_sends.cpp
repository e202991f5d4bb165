#include "sparse/windowed_sends.hpp"

#include "core/p2p.hpp"

#include <algorithm>

namespace a2av {

WindowedSends::WindowedSends(std::vector<const Parcel*> parcels, int tag, MPI_Comm comm,
                             bool synchronous, MemoryTracker& memory)
    : parcels_(std::move(parcels)),
      slots_(std::min(parcels_.size(), static_cast<std::size_t>(InFlight::limit())),
             MPI_REQUEST_NULL),
      done_(slots_.size()),
      tag_(tag),
      comm_(comm),
      synchronous_(synchronous),
      memory_(memory),
      held_(static_cast<std::int64_t>(parcels_.capacity() * sizeof(const Parcel*) +
                                      slots_.size() * (sizeof(MPI_Request) + sizeof(int)))) {
  memory_.allocate(held_);
}

WindowedSends::~WindowedSends() {
  InFlight::ended(in_flight_);
  memory_.release(held_);
}

bool WindowedSends::advance() {
  if (in_flight_ > 0) {
    int count = 0;
    check_mpi(MPI_Testsome(static_cast<int>(slots_.size()), slots_.data(), &count, done_.data(),
                           MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (count != MPI_UNDEFINED) in_flight_ -= count, InFlight::ended(count);
  }
  for (std::size_t slot = 0; next_ < parcels_.size() && slot < slots_.size(); ++slot) {
    if (slots_[slot] != MPI_REQUEST_NULL) continue;
    const Parcel& p = *parcels_[next_++];
    const ByteMessage& m = types_.emplace_back(p.bytes);
    check_mpi((synchronous_ ? MPI_Issend : MPI_Isend)(p.data, m.count(), m.type(), p.destination,
                                                      tag_, comm_, &slots_[slot]),
              synchronous_ ? "MPI_Issend" : "MPI_Isend");
    ++in_flight_;
    InFlight::posted(1);
  }
  return next_ == parcels_.size() && in_flight_ == 0;
}

}  // namespace a2av
