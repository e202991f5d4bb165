// No tax: once a communicator is set up, an exchange makes no collective call of its own
// unless it must agree before data moves (validation); hierarchical TuNA across nodes makes
// one node-local MPI_Alltoall of block sizes, its phase 0, and no allreduce.
// This program defines the MPI collectives a2av could call; the dynamic linker binds
// liba2av's calls to these definitions, which count them and forward to PMPI.
#include "harness.hpp"

#include <a2av/alltoallv.hpp>

#include <string>

namespace {

int collective_calls = 0;
int alltoall_calls = 0;

}  // namespace

extern "C" {
int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  ++collective_calls;
  return PMPI_Allreduce(send, recv, count, type, op, comm);
}
int MPI_Alltoall(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                 int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  ++collective_calls;
  ++alltoall_calls;
  return PMPI_Alltoall(send, send_count, send_type, recv, recv_count, recv_type, comm);
}
int MPI_Barrier(MPI_Comm comm) {
  ++collective_calls;
  return PMPI_Barrier(comm);
}
int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv,
                  int recv_count, MPI_Datatype recv_type, MPI_Comm comm) {
  ++collective_calls;
  return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
}
int MPI_Bcast(void* data, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  ++collective_calls;
  return PMPI_Bcast(data, count, type, root, comm);
}
}

namespace a2av::test {
namespace {

// Collective calls of one exchange of `spec` with fresh counts (so that nothing is reused
// from an earlier call), after a first call that sets the communicator up.
int collectives_per_call(const std::string& spec, std::uint64_t seed) {
  const int size = size_of(world());
  expect_same_as_vendor(spec, uniform(size, 100, seed), world(), seed, 1);
  const Matrix counts = uniform(size, 100, seed + 1);
  const Layout l = layout_for(counts, rank_of(world()), seed);
  std::vector<unsigned char> send(l.send_extent + 1), recv(l.recv_extent + 1);
  collective_calls = alltoall_calls = 0;
  const int code = A2AV_Alltoallv_with(spec.c_str(), send.data(), l.sendcounts.data(),
                                       l.sdispls.data(), MPI_BYTE, recv.data(), l.recvcounts.data(),
                                       l.rdispls.data(), MPI_BYTE, world());
  EXPECT_EQ(code, A2AV_SUCCESS) << spec << ": " << A2AV_Last_error_message();
  return collective_calls;
}

TEST(NoTax, InBandAlgorithmsMakeNoCollectiveCall) {
  if (size_of(world()) == 1) GTEST_SKIP() << "one rank agrees with nobody";
  std::vector<std::string> specs = {"vendor",
                                    "linear",
                                    "spread_out",
                                    "scattered",
                                    "pairwise",
                                    "auto",
                                    "tuna:radix=2",
                                    "tuna:radix=3,batch=1",
                                    "tuna:radix=2,direct_above=10",
                                    "node_aware",
                                    "node_aware:direct_above=0",
                                    "node_aware:radix=2"};
  // On one node; across (emulated) nodes shared_memory is refused and hierarchical TuNA
  // exchanges its sizes inside each node (below).
  if (one_node(size_of(world())))
    specs.insert(specs.end(), {"shared_memory", "tuna_coalesced", "tuna_staggered"});
  for (const std::string& spec : specs) EXPECT_EQ(collectives_per_call(spec, 3), 0) << spec;
}

TEST(NoTax, AgreementBeforeWhereDocumented) {
  if (size_of(world()) < 2) GTEST_SKIP() << "one rank agrees with nobody";
  EXPECT_GE(collectives_per_call("tuna:radix=2,validate=1", 5), 1) << "validation agrees";
}

TEST(NoTax, HierarchicalTunaAcrossNodesExchangesSizesInsideTheNodeOnly) {
  if (size_of(world()) < 4) GTEST_SKIP() << "needs two emulated nodes of two";
  for (const std::string spec :
       {"tuna_coalesced:ranks_per_node=2", "tuna_staggered:ranks_per_node=2"}) {
    EXPECT_EQ(collectives_per_call(spec, 7), 1) << spec;
    EXPECT_EQ(alltoall_calls, 1) << spec << ": phase 0, on the node's communicator";
  }
}

}  // namespace
}  // namespace a2av::test
