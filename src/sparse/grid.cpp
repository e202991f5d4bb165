// The two-hop grid exchange: ranks as a near-square grid of C = ceil(sqrt(P)) columns (the
// last row may be short). A message from s to d first goes to the rank in s's row and d's
// column, which forwards it down that column to d; where that rank does not exist (s in the
// short last row), it turns at d's row and s's column instead. All a rank's messages for one
// next hop travel as one aggregated message of records (header, bytes), so a rank sends at
// most about 2 sqrt(P) messages however many it has; each hop is an NBX round (nbx.cpp). The
// messages of one (source, destination) pair take one path in order, so they arrive in order.
// In the spirit of the two-dimensional decomposition of many-to-many exchanges (e.g.
// KaMPIng's grid all-to-all); what is new here is only the combination with NBX.
// Memory: the aggregated messages of both hops, sent and received (about twice the bytes
// moved, plus 16 bytes per message), and NBX's requests.
#include "sparse/sparse.hpp"

#include <cstring>
#include <map>

namespace a2av {
namespace {

struct Grid {
  int columns, size;

  int row(int r) const { return r / columns; }
  int column(int r) const { return r % columns; }
  int at(int row, int column) const { return row * columns + column; }
  // Where a message from `source` to `destination` turns.
  int turn(int source, int destination) const {
    const int first = at(row(source), column(destination));
    return first < size ? first : at(row(destination), column(source));
  }
};

Grid grid_for(int size) {
  int columns = 1;
  while (columns * columns < size) ++columns;
  return {columns, size};
}

struct RecordHeader {
  std::int32_t destination, origin;
  std::int64_t bytes;
};

// Aggregated messages, one per next hop, of records in the order added.
class Outbox {
 public:
  explicit Outbox(MemoryTracker& memory) : memory_(memory) {}
  ~Outbox() { memory_.release(charged_); }

  void add(int hop, const Parcel& p) {
    std::vector<std::byte>& out = by_hop_[hop];
    const RecordHeader header{p.destination, p.origin, p.bytes};
    const std::size_t at = out.size();
    out.resize(at + sizeof header + p.bytes);
    std::memcpy(out.data() + at, &header, sizeof header);
    if (p.bytes) std::memcpy(out.data() + at + sizeof header, p.data, p.bytes);
  }

  // One parcel per aggregated message.
  std::vector<Parcel> parcels(int me) {
    std::vector<Parcel> out;
    std::int64_t total = 0;
    for (const auto& [hop, bytes] : by_hop_) {
      out.push_back({hop, me, bytes.data(), static_cast<std::int64_t>(bytes.size())});
      total += static_cast<std::int64_t>(bytes.size());
    }
    memory_.allocate(total - charged_);
    charged_ = total;
    return out;
  }

 private:
  MemoryTracker& memory_;
  std::map<int, std::vector<std::byte>> by_hop_;  // ordered: the same on every run
  std::int64_t charged_ = 0;
};

// Calls f(header, data) for each record of an aggregated message.
template <class F>
void each_record(std::span<const std::byte> message, F f) {
  for (std::size_t at = 0; at < message.size();) {
    RecordHeader header;
    std::memcpy(&header, message.data() + at, sizeof header);
    at += sizeof header;
    f(header, message.data() + at);
    at += static_cast<std::size_t>(header.bytes);
  }
}

// Received aggregated messages, charged while they are held.
struct HeldInbox {
  Inbox inbox;
  MemoryTracker& memory;
  std::int64_t charged = 0;

  void charge() { memory.allocate(charged = inbox.bytes()); }
  ~HeldInbox() { memory.release(charged); }
};

}  // namespace

Fault grid_exchange(const std::vector<Parcel>& parcels, const SparseContext& at, const Fault& local,
                    Inbox& inbox) {
  const CommContext& ctx = at.ctx;
  MemoryTracker& memory = at.memory;
  const Grid grid = grid_for(ctx.size);
  const int me = ctx.rank;
  Outbox first(memory);
  std::vector<Parcel> turning_here;
  if (!local)
    for (const Parcel& p : parcels) {
      const int hop = grid.turn(me, p.destination);
      if (hop == me)
        turning_here.push_back(p);
      else
        first.add(hop, p);
    }
  HeldInbox forwarded{{}, memory};
  const Fault fault = nbx(first.parcels(me), at, local, forwarded.inbox);
  if (fault) return fault;
  forwarded.charge();

  Outbox second(memory);
  auto route = [&](const Parcel& p) {
    if (p.destination == me)
      inbox.add(p.origin, {p.data, static_cast<std::size_t>(p.bytes)});
    else
      second.add(p.destination, p);
  };
  for (const Parcel& p : turning_here) route(p);
  forwarded.inbox.each([&](int, std::span<const std::byte> message) {
    each_record(message, [&](const RecordHeader& h, const std::byte* data) {
      route({h.destination, h.origin, data, h.bytes});
    });
  });
  HeldInbox arrived{{}, memory};
  // The first hop agreed on errors and statistics; this one has none to add.
  std::optional<Statistics> ignored;
  const SparseContext second_hop{at.comm, ctx, memory, {}, ignored};
  const Fault none = nbx(second.parcels(me), second_hop, {}, arrived.inbox);
  arrived.charge();
  arrived.inbox.each([&](int, std::span<const std::byte> message) {
    each_record(message, [&](const RecordHeader& h, const std::byte* data) {
      inbox.add(h.origin, {data, static_cast<std::size_t>(h.bytes)});
    });
  });
  return none;
}

}  // namespace a2av
