#include "driver/recent_calls.hpp"

#include "core/environment.hpp"
#include "core/per_thread.hpp"

#include <algorithm>

namespace a2av {
namespace {

constexpr int kFields = 4;  // per peer: send count, send displacement, recv count, recv displ.

bool same_layout(const std::vector<std::int64_t>& kept, const Call& call, int size) {
  if (!call.sendcounts || !call.sdispls || !call.recvcounts || !call.rdispls) return false;
  const std::int64_t* k = kept.data();
  for (int p = 0; p < size; ++p, k += kFields)
    if ((k[0] != call.sendcounts[p]) | (k[1] != call.sdispls[p]) | (k[2] != call.recvcounts[p]) |
        (k[3] != call.rdispls[p]))
      return false;
  return true;
}

void copy_layout(std::vector<std::int64_t>& kept, const Call& call, int size) {
  kept.resize(static_cast<std::size_t>(size) * kFields);
  std::int64_t* k = kept.data();
  for (int p = 0; p < size; ++p, k += kFields) {
    k[0] = call.sendcounts[p];
    k[1] = call.sdispls[p];
    k[2] = call.recvcounts[p];
    k[3] = call.rdispls[p];
  }
}

}  // namespace

bool RecentCalls::matches(const Slot& slot, const Call& call, int size,
                          std::string_view spec) const {
  if (spec != slot.spec_text || !same_layout(slot.layout, call, size)) return false;
  if (!slot.prepared.normalized) return true;  // vendor: MPI itself takes the types as they are
  const TypeInfo recv_type = type_info(call.recvtype);
  const TypeInfo send_type = call.sendtype == call.recvtype ? recv_type : type_info(call.sendtype);
  return send_type == slot.send_type && recv_type == slot.recv_type;
}

std::size_t RecentCalls::find(const Call& call, std::string_view spec, bool validate) {
  if (call.in_place() || call.comm == MPI_COMM_NULL) return kSlots;
  const std::uint64_t generation = contexts_generation();
  for (std::size_t n = 0; n < kSlots; ++n) {
    const std::size_t i = (last_hit_ + n) % kSlots;
    const Key& k = keys_[i];
    if (k.comm != call.comm || k.generation != generation || k.sendbuf != call.sendbuf ||
        k.recvbuf != call.recvbuf || k.sendtype != call.sendtype || k.recvtype != call.recvtype ||
        k.validate != validate || !matches(slots_[i], call, slots_[i].prepared.ctx->size, spec))
      continue;
    keys_[i].last_used = ++clock_;
    last_hit_ = i;
    return i;
  }
  return kSlots;
}

std::size_t RecentCalls::claim_oldest() {
  const auto oldest = std::min_element(keys_.begin(), keys_.end(),
                                       [](auto& a, auto& b) { return a.last_used < b.last_used; });
  const auto slot = static_cast<std::size_t>(oldest - keys_.begin());
  keys_[slot] = Key{};                  // not found again until kept
  slots_[slot].prepared.ctx = nullptr;  // its communicator may be gone
  return slot;
}

bool RecentCalls::keep_if_repeatable(std::size_t slot_index, const Call& call,
                                     std::string_view spec, bool validate) {
  Slot& slot = slots_[slot_index];
  const Prepared& prepared = slot.prepared;
  const int size = prepared.ctx->size;
  const bool copies = prepared.normalized && prepared.normalized->copies();
  if (!prepared.repeatable() || call.in_place() || size > kMaxRecentSize || copies) return false;
  slot.spec_text = spec;
  slot.recv_type = type_info(call.recvtype);
  slot.send_type = call.sendtype == call.recvtype ? slot.recv_type : type_info(call.sendtype);
  copy_layout(slot.layout, call, size);
  keys_[slot_index] = {call.comm,    contexts_generation(), ++clock_,      call.sendbuf,
                       call.recvbuf, call.sendtype,         call.recvtype, validate};
  return true;
}

RecentCalls::Lease RecentCalls::prepare(const Call& call, std::string_view spec, bool validate,
                                        MemoryTracker& memory) {
  if (!verbose())
    if (const std::size_t found = find(call, spec, validate); found != kSlots)
      return Lease(*this, found, false);
  Lease lease(*this, claim_oldest(), true);
  prepare_into(lease.prepared(), call, spec, validate, true, memory);
  if (!verbose() && keep_if_repeatable(lease.slot_, call, spec, validate)) lease.releases_ = false;
  return lease;
}

RecentCalls::Lease::~Lease() {
  if (!releases_) return;
  Prepared& prepared = this->prepared();
  if (prepared.ctx && prepared.ctx->size > kMaxRecentSize)
    prepared = Prepared();
  else if (prepared.normalized)
    prepared.normalized->release_copies();
}

RecentCalls& recent_calls() {
  return per_thread<RecentCalls>();
}

}  // namespace a2av
