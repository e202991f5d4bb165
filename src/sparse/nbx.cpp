// NBX: Hoefler, Siebert, Lumsdaine, "Scalable Communication Protocols for Dynamic Sparse Data
// Exchange", PPoPP 2010, Section 3 and Algorithm 2. Every message is a synchronous send, so
// its completion means the destination has matched it; a rank whose sends have all completed
// enters a nonblocking collective, and once that completes every message of the round has been
// matched, and received, by its destination. Meanwhile each rank probes for any message and
// receives it. The collective here is an allreduce (MAXLOC of error code and rank) rather
// than a barrier, so the round agrees on errors at no extra latency.
// Memory: one request per message sent (and a datatype for any above 2 GiB).
#include "sparse/byte_message.hpp"
#include "sparse/sparse.hpp"

#include <deque>

namespace a2av {

Fault nbx(const std::vector<Parcel>& parcels, const SparseContext& at, const Fault& local,
          Inbox& inbox) {
  const CommContext& ctx = at.ctx;
  MemoryTracker& memory = at.memory;
  const int tag = next_sparse_tag(ctx);
  std::vector<MPI_Request> sends(parcels.size(), MPI_REQUEST_NULL);
  const auto request_bytes = static_cast<std::int64_t>(sends.size() * sizeof(MPI_Request));
  memory.allocate(request_bytes);
  std::deque<ByteMessage> types;
  for (std::size_t i = 0; i < parcels.size() && !local; ++i) {
    const ByteMessage& m = types.emplace_back(parcels[i].bytes);
    check_mpi(MPI_Issend(parcels[i].data, m.count(), m.type(), parcels[i].destination, tag,
                         ctx.comm, &sends[i]),
              "MPI_Issend");
  }
  int agreed[2] = {local.code, ctx.rank}, mine[2] = {local.code, ctx.rank};
  MPI_Request consensus = MPI_REQUEST_NULL;
  for (bool done = false; !done;) {
    int arrived = 0;
    MPI_Message message;
    MPI_Status status;
    check_mpi(MPI_Improbe(MPI_ANY_SOURCE, tag, ctx.comm, &arrived, &message, &status),
              "MPI_Improbe");
    if (arrived) {
      MPI_Count bytes = 0;
      check_mpi(MPI_Get_elements_x(&status, MPI_BYTE, &bytes), "MPI_Get_elements_x");
      const ByteMessage m(bytes);
      check_mpi(MPI_Mrecv(inbox.slot(status.MPI_SOURCE, bytes), m.count(), m.type(), &message,
                          MPI_STATUS_IGNORE),
                "MPI_Mrecv");
    }
    if (consensus == MPI_REQUEST_NULL) {
      int sent = 0;
      check_mpi(
          MPI_Testall(static_cast<int>(sends.size()), sends.data(), &sent, MPI_STATUSES_IGNORE),
          "MPI_Testall");
      if (sent)
        check_mpi(MPI_Iallreduce(mine, agreed, 1, MPI_2INT, MPI_MAXLOC, ctx.comm, &consensus),
                  "MPI_Iallreduce");
    } else {
      int complete = 0;
      check_mpi(MPI_Test(&consensus, &complete, MPI_STATUS_IGNORE), "MPI_Test");
      done = complete;
    }
  }
  memory.release(request_bytes);
  Fault fault{agreed[0], agreed[1], {}};
  if (fault && fault.rank == ctx.rank) fault.message = local.message;
  return fault;
}

}  // namespace a2av
