// The C++ entry points over the driver.
#include <a2av/alltoallv.hpp>

#include "alltoallv/registry.hpp"
#include "core/check.hpp"
#include "core/comm_context.hpp"
#include "core/per_thread.hpp"
#include "driver/alltoallv.hpp"
#include "inplace/algorithms.hpp"
#include "redistribute/engine.hpp"
#include "sparse/sparse.hpp"

#include <map>
#include <mutex>

namespace a2av {

void alltoallv(const void* sendbuf, std::span<const MPI_Count> sendcounts,
               std::span<const MPI_Aint> sdispls, MPI_Datatype sendtype, void* recvbuf,
               std::span<const MPI_Count> recvcounts, std::span<const MPI_Aint> rdispls,
               MPI_Datatype recvtype, MPI_Comm comm, const Options& options) {
  std::string rejected;
  const Call call = call_from_spans(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm, rejected);
  const CallResult result = run_alltoallv(call, options.algorithm, options.validate);
  if (options.info)
    *options.info = {result.describe(), result.peak_temp_bytes, result.max_in_flight};
}

std::vector<MPI_Count> exchange_counts(std::span<const MPI_Count> sendcounts, MPI_Comm comm) {
  const CommContext& ctx = comm_context(comm);
  if (sendcounts.size() < static_cast<std::size_t>(ctx.size))
    fail(A2AV_ERR_ARG, "sendcounts needs {} entries", ctx.size);
  std::vector<std::int64_t> out(ctx.size), in(sendcounts.begin(), sendcounts.begin() + ctx.size);
  check_mpi(MPI_Alltoall(in.data(), 1, MPI_INT64_T, out.data(), 1, MPI_INT64_T, ctx.comm),
            "MPI_Alltoall");
  return {out.begin(), out.end()};
}

std::vector<MPI_Aint> packed_displacements(std::span<const MPI_Count> counts) {
  std::vector<MPI_Aint> displs(counts.size());
  MPI_Aint at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = at;
    at += static_cast<MPI_Aint>(counts[i]);
  }
  return displs;
}

namespace {

ParameterDescription description_of(const Param& p) {
  return {std::string(p.key), p.min, p.max, p.fallback, std::string(p.default_doc),
          std::string(p.doc)};
}

void add_family(std::vector<AlgorithmDescription>& out, std::string_view family,
                std::span<const FamilyAlgorithm> table) {
  for (const FamilyAlgorithm& a : table) {
    AlgorithmDescription d{
        std::string(family),         std::string(a.name),     std::string(a.summary), {},
        std::string(a.restrictions), std::string(a.fallback), std::string(a.source)};
    for (const Param* p : a.params) d.parameters.push_back(description_of(*p));
    out.push_back(std::move(d));
  }
}

}  // namespace

std::vector<AlgorithmDescription> algorithms() {
  std::vector<AlgorithmDescription> out;
  for (const AlgorithmDescriptor* a : algorithm_table()) {
    AlgorithmDescription d{"alltoallv",
                           std::string(a->name),
                           std::string(a->summary),
                           {},
                           std::string(a->restrictions),
                           std::string(a->fallback),
                           std::string(a->source),
                           a->one_node_only,
                           a->bounds_in_flight,
                           a->tuning_variants};
    for (const Param* p : a->params) d.parameters.push_back(description_of(*p));
    out.push_back(std::move(d));
  }
  add_family(out, "in-place", inplace_algorithms());
  add_family(out, "redistribution", redistribution_algorithms());
  add_family(out, "sparse", sparse_algorithms());
  return out;
}

std::int64_t temp_memory_bound(std::string_view spec, int comm_size, int ranks_per_node,
                               std::int64_t max_block_bytes, std::int64_t send_total_bytes) {
  const Spec parsed = parse_spec(spec);
  return parsed.algorithm->memory_bound(
      {comm_size, ranks_per_node, max_block_bytes, send_total_bytes}, parsed.params);
}

namespace detail {

// Committed once per size for the whole process and kept until finalize; the map is shared by
// all threads, so it is locked, and each thread keeps the types it has looked up, so that a
// repeated call takes no lock.
MPI_Datatype byte_type_of_size(int bytes) {
  A2AV_THREAD_LOCAL std::map<int, MPI_Datatype> seen;
  if (const auto it = seen.find(bytes); it != seen.end()) return it->second;
  static std::mutex mutex;
  static std::map<int, MPI_Datatype> types;
  const std::lock_guard lock(mutex);
  auto it = types.find(bytes);
  if (it == types.end()) {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_contiguous(bytes, MPI_BYTE, &type), "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
    it = types.emplace(bytes, type).first;
  }
  seen.emplace(bytes, it->second);
  return it->second;
}

}  // namespace detail
}  // namespace a2av
