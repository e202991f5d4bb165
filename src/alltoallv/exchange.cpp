#include "alltoallv/exchange.hpp"

#include "alltoallv/registry.hpp"
#include "alltoallv/select.hpp"
#include "core/check.hpp"
#include "core/comm_context.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace a2av {
namespace {

struct LocalStatus {
  int code = A2AV_SUCCESS;
  std::string message;

  void set(int c, std::string m) {
    if (code == A2AV_SUCCESS) {
      code = c;
      message = std::move(m);
    }
  }
};

bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
}

std::string_view chosen_spec_text(std::string_view spec) {
  if (!spec.empty()) return spec;
  const char* env = std::getenv("A2AV_ALGORITHM");
  return env && *env ? std::string_view(env) : std::string_view("auto");
}

// With validation: every rank learns what each peer will send it and compares.
void check_counts(const CommContext& ctx, const std::vector<std::int64_t>& send_bytes,
                  const std::vector<std::int64_t>& recv_bytes, LocalStatus& status) {
  std::vector<std::int64_t> incoming(ctx.size);
  check_mpi(MPI_Alltoall(send_bytes.data(), 1, MPI_INT64_T, incoming.data(), 1, MPI_INT64_T,
                         ctx.comm),
            "MPI_Alltoall");
  for (int peer = 0; peer < ctx.size; ++peer)
    if (incoming[peer] != recv_bytes[peer])
      return status.set(A2AV_ERR_COUNTS,
                        fmt::format("rank {} sends {} bytes to rank {}, which expects {}", peer,
                                    incoming[peer], ctx.rank, recv_bytes[peer]));
}

// One allreduce: the worst error code, the lowest rank that has it, the largest block.
struct Agreement {
  int code;
  int first_rank;
  std::int64_t max_block;
};

Agreement agree(const CommContext& ctx, int code, std::int64_t max_block) {
  std::int64_t values[3] = {code, code ? -ctx.rank : -ctx.size, max_block};
  if (ctx.size > 1)
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values, 3, MPI_INT64_T, MPI_MAX, ctx.comm),
              "MPI_Allreduce");
  return {static_cast<int>(values[0]), static_cast<int>(-values[1]), values[2]};
}

Spec parse_checked(std::string_view text, LocalStatus& status) {
  try {
    return parse_spec(text);
  } catch (const Error& e) {
    status.set(e.code(), e.what());
    return parse_spec("vendor");
  }
}

}  // namespace

CallInfo run_alltoallv(const Call& call, std::string_view spec_text, bool validate) {
  const CommContext& ctx = comm_context(call.comm);
  LocalStatus status;
  Spec spec = parse_checked(chosen_spec_text(spec_text), status);
  if (ctx.is_intercomm && spec.algorithm->name != "vendor")
    fail(A2AV_ERR_ARG, "intercommunicators are supported by the vendor algorithm only");
  std::string message;
  if (int code = check_local_arguments(call, ctx.size, message)) status.set(code, message);

  std::vector<std::int64_t> send_bytes(ctx.size, 0), recv_bytes(ctx.size, 0);
  if (status.code == A2AV_SUCCESS) {
    send_bytes = send_block_bytes(call, ctx.size);
    recv_bytes = recv_block_bytes(call, ctx.size);
    if (send_bytes[ctx.rank] != recv_bytes[ctx.rank])
      status.set(A2AV_ERR_COUNTS, fmt::format("rank {} sends itself {} bytes but expects {}",
                                              ctx.rank, send_bytes[ctx.rank],
                                              recv_bytes[ctx.rank]));
  }
  if (validate || spec.validate || env_flag("A2AV_VALIDATE"))
    check_counts(ctx, send_bytes, recv_bytes, status);
  const auto largest = std::max_element(send_bytes.begin(), send_bytes.end());
  const Agreement agreed = agree(ctx, status.code, largest == send_bytes.end() ? 0 : *largest);
  if (agreed.code != A2AV_SUCCESS) {
    if (status.code != A2AV_SUCCESS) throw Error(agreed.code, status.message);
    fail(agreed.code, "rank {} reported: {}", agreed.first_rank, A2AV_Error_string(agreed.code));
  }

  if (!spec.algorithm->run) {
    const bool keep_validate = spec.validate;
    spec = parse_spec(choose_algorithm(ctx.size, agreed.max_block));
    spec.validate = keep_validate;
  }
  MemoryTracker memory;
  Mismatch mismatch;
  if (spec.algorithm->name == "vendor") {
    const ByteBlocks none;
    spec.algorithm->run({ctx, none, none, agreed.max_block, memory, mismatch, call}, spec.params);
  } else {
    NormalizedCall normalized(call, ctx.size, memory);
    spec.algorithm->run({ctx, normalized.send(), normalized.recv(), agreed.max_block, memory,
                         mismatch, call},
                        spec.params);
    mismatch.raise();
    normalized.finish();
  }
  return {describe(spec, ctx.size, ctx.node_size), memory.peak()};
}

}  // namespace a2av
