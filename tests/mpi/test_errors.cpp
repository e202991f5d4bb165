// Bad input: every error code, returned by every rank alike where the error concerns the
// exchange, with the send buffer left as it was, and the receive buffer too where the ranks
// agree before data moves. Every algorithm but vendor agrees in band, while data moves
// (docs/errors.md): there a rank's receive buffer may hold the blocks of peers that had no
// error, but never a byte from the rank that had one. vendor keeps MPI's semantics: an error
// only one rank makes is that rank's alone (its peers would wait in MPI_Alltoallv), so the
// tests give vendor such errors with validation, which agrees.
#include "harness.hpp"

#include "alltoallv/registry.hpp"

#include <a2av/alltoallv.hpp>
#include <a2av/plan.hpp>

#include <cstdlib>
#include <string>

namespace a2av::test {
namespace {

// A small valid exchange (n ints to every rank) that each test breaks in one way.
struct Case {
  int me = rank_of(world()), size = size_of(world());
  int n = 2;
  std::vector<MPI_Count> sc = std::vector<MPI_Count>(size, n), rc = sc;
  std::vector<MPI_Aint> sd = displs(), rd = displs();
  std::vector<int> send = std::vector<int>(n * size, 7), recv = std::vector<int>(n * size, -1);
  MPI_Datatype send_type = MPI_INT, recv_type = MPI_INT;

  Case() = default;
  explicit Case(int per_block)
      : n(per_block),
        sc(size, n),
        rc(sc),
        sd(displs()),
        rd(displs()),
        send(n * size, 7),
        recv(n * size, -1) {}

  std::vector<MPI_Aint> displs() const {
    std::vector<MPI_Aint> d(size);
    for (int p = 0; p < size; ++p) d[p] = n * p;
    return d;
  }
  int run(const std::string& spec, const void* sendbuf = nullptr, void* recvbuf = nullptr) {
    return A2AV_Alltoallv_with(spec.c_str(), sendbuf ? sendbuf : send.data(), sc.data(), sd.data(),
                               send_type, recvbuf ? recvbuf : recv.data(), rc.data(), rd.data(),
                               recv_type, world());
  }
  // The code every rank returned, or -1 if ranks disagree.
  static int agreed(int code) {
    int lo = code, hi = code;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, world());
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, world());
    return lo == hi ? lo : -1;
  }
  void expect_untouched() const {
    EXPECT_EQ(send, std::vector<int>(n * size, 7));
    EXPECT_EQ(recv, std::vector<int>(n * size, -1));
  }
  // After `failing` rejected its arguments: the send buffer as it was everywhere; the receive
  // buffer too, except that with in-band agreement other ranks may hold their peers' blocks,
  // but nothing from `failing`.
  void expect_untouched_after_error_of(int failing, const std::string& spec) const {
    if (me == failing || !agrees_in_band(spec)) return expect_untouched();
    EXPECT_EQ(send, std::vector<int>(n * size, 7)) << spec;
    for (int k = 0; k < n; ++k) EXPECT_EQ(recv[n * failing + k], -1) << spec;
  }
  bool agrees_in_band(const std::string& spec) const {
    const std::string name = spec.substr(0, spec.find(':'));
    return size > 1 && !std::getenv("A2AV_VALIDATE") && name != "vendor" &&
           spec.find("validate=1") == std::string::npos;
  }
};

// The spec with validation where it would otherwise not agree on one rank's error (vendor).
std::string agreeing(const std::string& spec) {
  return spec == "vendor" ? "vendor:validate=1" : spec;
}

const std::vector<std::string> kAllAlgorithms = {"auto",
                                                 "vendor",
                                                 "linear",
                                                 "spread_out",
                                                 "scattered",
                                                 "pairwise",
                                                 "shared_memory",
                                                 "tuna:radix=2",
                                                 "tuna:radix=3",
                                                 "tuna:radix=2,batch=1",
                                                 "tuna_coalesced",
                                                 "tuna_staggered",
                                                 "tuna:radix=2,direct_above=0",
                                                 "tuna_coalesced:ranks_per_node=2",
                                                 "tuna_staggered:ranks_per_node=2",
                                                 "node_aware",
                                                 "node_aware:direct_above=0",
                                                 "node_aware:agents=1",
                                                 "node_aware:radix=2",
                                                 "node_aware:radix=3,direct_above=0"};

// All of them, less shared_memory where the ranks span emulated nodes.
std::vector<std::string> algorithms() {
  std::vector<std::string> specs = kAllAlgorithms;
  if (!one_node(size_of(world()))) std::erase(specs, "shared_memory");
  return specs;
}

TEST(Errors, NegativeCountOnOneRankFailsEverywhere) {
  for (const auto& name : algorithms()) {
    const std::string spec = agreeing(name);
    Case c;
    if (c.me == c.size - 1) c.sc[0] = -3;
    EXPECT_EQ(Case::agreed(c.run(spec)), A2AV_ERR_ARG) << spec;
    if (c.me == c.size - 1) {
      EXPECT_NE(std::string(A2AV_Last_error_message()).find("negative"), std::string::npos);
      c.sc[0] = 2;
    }
    c.expect_untouched_after_error_of(c.size - 1, spec);
  }
}

TEST(Errors, NegativeCountWithBlocksOfManyPieces) {
  // 100 ints per block: under A2AV_MAX_MESSAGE=64 (test_errors_pieces) every block is 7
  // pieces, which the failing rank must drain and its peers must not wait for.
  for (const auto& name : algorithms()) {
    const std::string spec = agreeing(name);
    Case c(100);
    if (c.me == 0) c.sc[c.size - 1] = -1;
    EXPECT_EQ(Case::agreed(c.run(spec)), A2AV_ERR_ARG) << spec;
    if (c.me == 0) c.sc[c.size - 1] = 100;
    c.expect_untouched_after_error_of(0, spec);
    EXPECT_EQ(c.run(spec), A2AV_SUCCESS) << spec << ": " << A2AV_Last_error_message();
    EXPECT_EQ(c.recv, std::vector<int>(100 * c.size, 7)) << spec << ": the next call is clean";
  }
}

TEST(Errors, ASilentRankAgainstBlocksOfManyPiecesIsACountErrorNotAHang) {
  // Rank 0 sends and expects nothing; its peers send it 100 ints and expect as many. Under
  // test_errors_pieces every block is 7 pieces, so from 3 ranks on a peer's large blocks
  // exceed their share of the default bound on requests in flight and go after TuNA's rounds,
  // while rank 0, with none of its own, must not wait for them mid-rounds.
  for (const std::string& spec : algorithms()) {
    if (spec == "vendor") continue;  // MPI's own behaviour
    Case c(100);
    if (c.size < 2) GTEST_SKIP() << "needs a peer";
    if (c.me == 0) c.sc.assign(c.size, 0), c.rc.assign(c.size, 0);
    EXPECT_EQ(Case::agreed(c.run(spec)), A2AV_ERR_COUNTS) << spec;
    Case clean(100);
    EXPECT_EQ(clean.run(spec), A2AV_SUCCESS) << spec << ": " << A2AV_Last_error_message();
    EXPECT_EQ(clean.recv, std::vector<int>(100 * clean.size, 7))
        << spec << ": the next call is clean";
  }
}

TEST(Errors, TwoRanksWithDifferentErrorsAgreeOnTheLargerCode) {
  for (const auto& name : algorithms()) {
    const std::string spec = agreeing(name);
    Case c;
    if (c.size < 2) GTEST_SKIP() << "needs two failing ranks";
    if (c.me == 0) c.sc[1] = -1;                     // A2AV_ERR_ARG
    if (c.me == 1) c.recv_type = MPI_DATATYPE_NULL;  // A2AV_ERR_DATATYPE
    EXPECT_EQ(Case::agreed(c.run(spec)), A2AV_ERR_DATATYPE) << spec;
  }
}

// The messages that agree on an error keep the bound on requests in flight, on the rank that
// failed (its error's tag to every peer) and on its peers, whose exchanges go on meanwhile;
// with messages in pieces too (test_errors_pieces: TuNA's forwarded messages in many pieces
// exceeded it before, 9 against 8 at 16 ranks).
TEST(Errors, AgreeingOnAnErrorKeepsTheBoundOnRequestsInFlight) {
  for (const auto& name : algorithms()) {
    if (!parse_spec(name).algorithm->bounds_in_flight) continue;
    const std::string spec =
        name + (name.find(':') == std::string::npos ? ":" : ",") + "in_flight=8";
    Case c(3);
    if (c.me == c.size / 2) c.sc[0] = -1;
    EXPECT_EQ(Case::agreed(c.run(spec)), A2AV_ERR_ARG) << spec;
    EXPECT_LE(A2AV_Last_in_flight(), 8) << spec << " on rank " << c.me;
    c.expect_untouched_after_error_of(c.size / 2, spec);
  }
}

// The C++ entry points take spans; one too short on one rank is an argument error that every
// rank returns (it used to throw on that rank alone, before any agreement).
TEST(Errors, SpanTooShortOnOneRankFailsEverywhere) {
  for (const auto& name : algorithms()) {
    const std::string spec = agreeing(name);
    Case c;
    const bool failing = c.me == c.size - 1;
    const std::span<const MPI_Count> recvcounts(c.rc.data(), failing ? c.size - 1 : c.size);
    int code = A2AV_SUCCESS;
    try {
      a2av::alltoallv(c.send.data(), c.sc, c.sd, MPI_INT, c.recv.data(), recvcounts, c.rd, MPI_INT,
                      world(), {.algorithm = spec});
    } catch (const a2av::Error& e) {
      code = e.code();
      if (failing) {
        EXPECT_NE(std::string(e.what()).find("entries"), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(Case::agreed(code), A2AV_ERR_ARG) << spec;
    c.expect_untouched_after_error_of(c.size - 1, spec);
  }
}

TEST(Errors, PlanWithSpanTooShortOnOneRankFailsEverywhere) {
  Case c;
  const bool failing = c.me == 0;
  const std::span<const MPI_Aint> sdispls(c.sd.data(), failing ? 0 : c.size);
  int code = A2AV_SUCCESS;
  try {
    a2av::Plan plan(c.send.data(), c.sc, sdispls, MPI_INT, c.recv.data(), c.rc, c.rd, MPI_INT,
                    world());
  } catch (const a2av::Error& e) {
    code = e.code();
  }
  EXPECT_EQ(Case::agreed(code), A2AV_ERR_ARG);
  c.expect_untouched();
}

TEST(Errors, VendorErrorsAreEachRanksOwnAsInMPI) {
  // Without validation vendor agrees on nothing: an error every rank makes is returned by
  // every rank, before the vendor call, with nothing moved and no collective.
  Case c;
  c.sc[0] = -1;
  EXPECT_EQ(Case::agreed(c.run("vendor")), A2AV_ERR_ARG);
  EXPECT_NE(std::string(A2AV_Last_error_message()).find("negative"), std::string::npos);
  c.sc[0] = 2;
  c.expect_untouched();
}

TEST(Errors, NullBufferWithData) {
  Case c;
  const int code = A2AV_Alltoallv_with("tuna", nullptr, c.sc.data(), c.sd.data(), MPI_INT,
                                       c.recv.data(), c.rc.data(), c.rd.data(), MPI_INT, world());
  EXPECT_EQ(Case::agreed(code), A2AV_ERR_ARG);
  c.expect_untouched();
}

TEST(Errors, OverlappingReceiveBlocks) {
  Case c;
  if (c.size < 2) GTEST_SKIP() << "needs two blocks";
  if (c.me == 0) c.rd[1] = 1;  // overlaps the block of rank 0
  EXPECT_EQ(Case::agreed(c.run("spread_out")), A2AV_ERR_ARG);
  c.expect_untouched_after_error_of(0, "spread_out");
}

// MPI forbids send and receive buffers that share bytes (MPICH refuses them; Open MPI's own
// algorithms read bytes already overwritten): one rank passing its receive buffer as its send
// buffer fails every rank, under every algorithm, with nothing moved on that rank.
TEST(Errors, AliasedSendAndReceiveBuffersOnOneRankFailEverywhere) {
  for (const auto& name : algorithms()) {
    const std::string spec = agreeing(name);
    Case c;
    const bool aliasing = c.me == 0;
    const int code = c.run(spec, aliasing ? c.recv.data() : c.send.data());
    if (aliasing) {
      EXPECT_NE(std::string(A2AV_Last_error_message()).find("MPI_IN_PLACE"), std::string::npos)
          << A2AV_Last_error_message();
    }
    EXPECT_EQ(Case::agreed(code), A2AV_ERR_ARG) << spec;
    c.expect_untouched_after_error_of(0, spec);
  }
}

TEST(Errors, SendAndReceiveBlocksSharingOneByteFail) {
  Case c;
  // The receive blocks start one int before the end of the send blocks, in one allocation.
  std::vector<int> one(2 * c.n * c.size, 7);
  const int code = c.run("spread_out", one.data(), one.data() + c.n * c.size - 1);
  EXPECT_EQ(Case::agreed(code), A2AV_ERR_ARG);
  EXPECT_EQ(one, std::vector<int>(2 * c.n * c.size, 7));
}

// One allocation holding the send blocks and, apart from them, the receive blocks is valid.
TEST(Errors, SendAndReceiveBlocksApartInOneBufferAreExchanged) {
  for (const auto& spec : algorithms()) {
    Case c;
    std::vector<int> one(2 * c.n * c.size);
    for (int i = 0; i < c.n * c.size; ++i) one[i] = 1000 * c.me + i;  // block p: to rank p
    for (int p = 0; p < c.size; ++p) c.rd[p] = c.n * (c.size + p);    // the second half
    ASSERT_EQ(Case::agreed(c.run(spec, one.data(), one.data())), A2AV_SUCCESS) << spec;
    for (int p = 0; p < c.size; ++p)
      for (int k = 0; k < c.n; ++k)
        EXPECT_EQ(one[c.n * (c.size + p) + k], 1000 * p + c.n * c.me + k) << spec << " from " << p;
  }
}

TEST(Errors, DisplacementOverflow) {
  Case c;
  MPI_Datatype big;
  MPI_Type_contiguous(1 << 20, MPI_BYTE, &big);
  MPI_Type_commit(&big);
  c.recv_type = c.send_type = big;
  c.sd[0] = c.rd[0] = MPI_Aint{1} << 50;  // 2^50 elements of 1 MiB
  EXPECT_EQ(Case::agreed(c.run("linear")), A2AV_ERR_ARG);
  EXPECT_NE(std::string(A2AV_Last_error_message()).find("overflow"), std::string::npos);
  MPI_Type_free(&big);
  c.expect_untouched();
}

TEST(Errors, ReceiveBufferInPlaceIsRejected) {
  Case c;
  EXPECT_EQ(Case::agreed(c.run("linear", nullptr, MPI_IN_PLACE)), A2AV_ERR_ARG);
}

TEST(Errors, NullDatatype) {
  Case c;
  c.send_type = MPI_DATATYPE_NULL;
  EXPECT_EQ(Case::agreed(c.run("tuna")), A2AV_ERR_DATATYPE);
  c.expect_untouched();
}

TEST(Errors, UnknownAlgorithmNameKeyOrValue) {
  for (const char* spec : {"fastest", "tuna:radix=1", "tuna:radix=x", "tuna:colour=2",
                           "scattered:block_count=0", "tuna:radix", "linear:validate=2"}) {
    Case c;
    EXPECT_EQ(Case::agreed(c.run(spec)), A2AV_ERR_ALGORITHM) << spec;
    c.expect_untouched();
  }
  Case c;
  c.run("fastest");
  EXPECT_NE(std::string(A2AV_Last_error_message()).find("tuna_coalesced"), std::string::npos)
      << "the message lists the accepted names";
}

TEST(Errors, DisagreeingCountsWithValidation) {
  for (const auto& spec : algorithms()) {
    Case c;
    if (c.me == 0) c.rc[c.size - 1] = 1;  // rank P-1 sends 2
    EXPECT_EQ(Case::agreed(
                  c.run(spec + (spec.find(':') == std::string::npos ? ":" : ",") + "validate=1")),
              A2AV_ERR_COUNTS)
        << spec;
    if (c.me == 0) c.rc[c.size - 1] = 2;
    c.expect_untouched();
  }
}

TEST(Errors, ValidationByEnvironment) {
  if (!std::getenv("A2AV_VALIDATE")) GTEST_SKIP() << "run as test_errors_validate_env";
  for (const std::string spec : {"tuna", "spread_out", "auto"}) {
    Case c;
    if (c.me == 0) c.rc[c.size - 1] = 3;
    EXPECT_EQ(Case::agreed(c.run(spec)), A2AV_ERR_COUNTS) << spec;
    if (c.me == 0) c.rc[c.size - 1] = 2;
    c.expect_untouched();
  }
}

TEST(Errors, WrongSizesWithoutValidationAreCountErrors) {
  // Rank 0 expects 1 int from P-1, which sends 2. Without validation each algorithm sees it
  // where it can: a truncated receive, or TuNA's size headers. It must report a count
  // error on rank 0, never write past the block, and leave no rank hanging.
  for (const auto& spec : algorithms()) {
    if (spec == "vendor" || spec == "auto") continue;  // MPI's own behaviour
    Case c;
    if (c.size < 2) GTEST_SKIP() << "needs a peer";
    if (c.me == 0) c.rc[c.size - 1] = 1;
    const int code = c.run(spec);
    if (c.me == 0) {
      EXPECT_EQ(code, A2AV_ERR_COUNTS) << spec << ": " << A2AV_Last_error_message();
      EXPECT_EQ(c.recv[2 * (c.size - 1) + 1], -1) << spec << ": wrote past the receive block";
    }
    MPI_Barrier(world());
  }
}

TEST(Errors, ZeroAgainstNonZeroCountsAreCountErrorsNotHangs) {
  // A direct algorithm sends every peer a message, an empty one for an empty block, and TuNA
  // every block's size (in a header, or the direct message of its round; hierarchical TuNA
  // one message per block or per pair of nodes, empty or not), so a receiver that
  // expects data from a sender that sends none (or the reverse) finds out instead of
  // waiting, and no message is left over for the next call.
  for (const std::string& spec : algorithms()) {
    if (spec == "vendor") continue;  // MPI's own behaviour
    for (const bool sender_says_zero : {true, false}) {
      Case c;
      if (c.size < 2) GTEST_SKIP() << "needs a peer";
      if (sender_says_zero && c.me == c.size - 1) c.sc[0] = 0;
      if (!sender_says_zero && c.me == 0) c.rc[c.size - 1] = 0;
      const int code = c.run(spec);
      const bool agreed = std::getenv("A2AV_VALIDATE");  // validation agrees count errors
      const int expected = c.me == 0 || agreed ? A2AV_ERR_COUNTS : A2AV_SUCCESS;
      EXPECT_EQ(code, expected) << spec << ": " << A2AV_Last_error_message();
      Case clean;
      EXPECT_EQ(clean.run(spec), A2AV_SUCCESS) << spec << ": " << A2AV_Last_error_message();
      EXPECT_EQ(clean.recv, std::vector<int>(2 * clean.size, 7)) << spec;
    }
  }
}

TEST(Errors, CountsThatDisagreeOnBlocksOfManyPiecesAreCountErrorsNotHangs) {
  // 100 ints a block: under test_errors_pieces (A2AV_MAX_MESSAGE=64) 7 pieces of 64 bytes.
  // Rank 0 expects from rank P-1 fewer pieces than it sends, more, or several where it sends
  // one; on several nodes the two sides then also disagree on whether a pair's blocks fit
  // one message. Rank 0 reports a count error, writes nothing past the block, no rank waits
  // for a piece that never comes, and none is left over for the next call.
  struct Disagreement {
    MPI_Count expected, sent;  // rank 0's count for P-1's block, P-1's for rank 0
  };
  for (const std::string& spec : algorithms()) {
    if (spec == "vendor" || spec == "auto") continue;  // MPI's own behaviour
    for (const Disagreement d : {Disagreement{50, 100}, {150, 100}, {100, 10}}) {
      Case c(100);
      if (c.size < 2) GTEST_SKIP() << "needs a peer";
      if (c.me == 0) c.rc[c.size - 1] = d.expected, c.recv.resize(c.recv.size() + 100, -1);
      if (c.me == c.size - 1) c.sc[0] = d.sent;
      const int code = c.run(spec);
      const bool agreed = std::getenv("A2AV_VALIDATE");  // validation agrees count errors
      EXPECT_EQ(code, c.me == 0 || agreed ? A2AV_ERR_COUNTS : A2AV_SUCCESS)
          << spec << " " << d.expected << "/" << d.sent << ": " << A2AV_Last_error_message();
      for (std::size_t k = 100 * (c.size - 1) + d.expected; c.me == 0 && k < c.recv.size(); ++k) {
        ASSERT_EQ(c.recv[k], -1) << spec << ": wrote past the receive block";
      }
      Case clean(100);
      EXPECT_EQ(clean.run(spec), A2AV_SUCCESS) << spec << ": " << A2AV_Last_error_message();
      EXPECT_EQ(clean.recv, std::vector<int>(100 * clean.size, 7)) << spec;
    }
  }
}

TEST(Errors, TemporaryMemoryThatCannotBeHadIsACapacityError) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "AddressSanitizer ends the process on a 128 TiB operator new instead of "
                  "throwing std::bad_alloc";
#endif
  // 2^44 elements from every rank, received by rank 0 alone with a strided type: its packed
  // receive copy (128 TiB per peer, beyond the address space) cannot be allocated. The
  // others need no copy, yet every rank must return the error, before any data moves (so
  // tuna, which agrees before; the buffers are far smaller than the counts say).
  Case c;
  MPI_Datatype pair, strided, vec;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, 4 * sizeof(int), &strided);
  MPI_Type_commit(&strided);
  c.send_type = pair;
  c.recv_type = c.me == 0 ? strided : pair;
  c.sc.assign(c.size, MPI_Count{1} << 44);
  c.rc = c.sc;
  EXPECT_EQ(Case::agreed(c.run("tuna:radix=2")), A2AV_ERR_CAPACITY) << A2AV_Last_error_message();
  c.expect_untouched();
  MPI_Type_free(&vec);
  MPI_Type_free(&strided);
  MPI_Type_free(&pair);
}

TEST(Errors, MessagesNameTheCode) {
  for (int code : {A2AV_SUCCESS, A2AV_ERR_ARG, A2AV_ERR_COUNTS, A2AV_ERR_ALGORITHM,
                   A2AV_ERR_CAPACITY, A2AV_ERR_DATATYPE, A2AV_ERR_MPI})
    EXPECT_EQ(std::string(A2AV_Error_string(code)).rfind("A2AV_", 0), 0u) << code;
}

TEST(Errors, ASuccessfulCallAfterErrorsStillWorks) {
  Case c;
  EXPECT_EQ(c.run("tuna:radix=2"), A2AV_SUCCESS) << A2AV_Last_error_message();
  for (int p = 0; p < c.size; ++p) EXPECT_EQ(c.recv[2 * p], 7);
}

}  // namespace
}  // namespace a2av::test
