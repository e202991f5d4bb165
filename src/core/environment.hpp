// Settings from A2AV_* environment variables: one table of every variable the library reads
// (name, type, default, doc), and one accessor, env_text_at(), through which every file reads
// them. Each variable is read at its first use in the process and kept: a call must not pay
// for getenv. The README's table lists the same variables (tests/tool/check_readme_env.py);
// `a2av environment` prints this one (include/a2av/environment.hpp).
//
// Readers name a variable by a string literal that must be in the table, with the type the
// reader expects; anything else does not compile:
//   static const bool validate = env_flag("A2AV_VALIDATE");
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace a2av {

enum class EnvType {
  flag,     // unset or empty: the default; "0": off; anything else: on
  integer,  // decimal (atoll); unset or empty: the default; outside the range: see IntegerRange
  number,   // floating point (strtod); unset or empty: the default
  string,   // unset or empty: the default
  path,     // a file; unset or empty: none
};

// What an integer outside [min, max] becomes: the default, or the nearer bound.
enum class OutOfRange { fallback, clamp };

struct IntegerRange {
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  OutOfRange below = OutOfRange::fallback;
  OutOfRange above = OutOfRange::fallback;
};

struct EnvSpec {
  std::string_view name;
  EnvType type;
  std::string_view doc;  // one line
  // flag (0 or 1), integer, number: the value when unset or empty; none where the reader
  // computes the default (then default_text says how).
  std::optional<std::int64_t> fallback = std::nullopt;
  // string: the value when unset or empty; integer without a fallback: the default in words.
  std::string_view default_text = {};
  IntegerRange range = {};  // integer only
};

// Open MPI's MPI_Comm_idup (4.1) starts its later rounds of context-id agreement from
// progress, as collectives on the parent communicator: they then interleave with the caller's
// own nonblocking collectives on it differently on each rank, and those fail (MPI_ERR_TRUNCATE
// in libnbc) or hang (open-mpi/ompi#2025; MPICH's test nonblocking3 under the preload). There a
// nonblocking first call sets a2av up by default with MPI_Comm_dup, as blocking calls do.
#if defined(OPEN_MPI)
inline constexpr std::int64_t kCommIdupByDefault = 0;
#else
inline constexpr std::int64_t kCommIdupByDefault = 1;
#endif

inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;
inline constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// Every environment variable the library reads (the command-line tool and the tests read
// others of their own). Keep the README's table ("Environment variables") in step.
inline constexpr std::array kEnvironment{
    EnvSpec{.name = "A2AV_ALGORITHM",
            .type = EnvType::string,
            .doc = "the spec a call runs when it gives none (A2AV_Alltoallv, a NULL or empty "
                   "spec, an empty Options::algorithm)",
            .default_text = "auto"},
    EnvSpec{.name = "A2AV_VALIDATE",
            .type = EnvType::flag,
            .doc = "before any data moves, check that what each rank sends matches what its "
                   "peer expects (one extra MPI_Alltoall); A2AV_ERR_COUNTS on every rank if not",
            .fallback = 0},
    EnvSpec{.name = "A2AV_AGREE_ERRORS",
            .type = EnvType::flag,
            .doc = "0: skip the MPI_Allreduce that agrees on argument errors where nothing else "
                   "needs it; a bad argument is then reported by its rank alone",
            .fallback = 1},
    EnvSpec{.name = "A2AV_TUNING_FILE",
            .type = EnvType::path,
            .doc = "a tuning table (JSON, docs/tuning.md) that auto consults first; a bad file "
                   "fails every auto call with A2AV_ERR_ALGORITHM"},
    EnvSpec{.name = "A2AV_MACHINE_FILE",
            .type = EnvType::path,
            .doc = "a machine file (docs/model.md), by path or by name (`a2av machines`), with "
                   "which auto asks the cost model when no tuning rule applies"},
    EnvSpec{.name = "A2AV_DATA_DIR",
            .type = EnvType::path,
            .doc = "where a2av's data files are (machine files, platforms, schemas); default: "
                   "share/a2av of the prefix liba2av is installed in"},
    EnvSpec{.name = "A2AV_VERBOSE",
            .type = EnvType::flag,
            .doc = "rank 0 prints what auto chose and why, and what shared memory it set up",
            .fallback = 0},
    EnvSpec{.name = "A2AV_SPARSE_ALGORITHM",
            .type = EnvType::string,
            .doc = "the sparse exchange's algorithm when a call names none: nbx, grid, dense, "
                   "shared_memory, auto",
            .default_text = "auto"},
    EnvSpec{.name = "A2AV_PRELOAD_STATS",
            .type = EnvType::flag,
            .doc = "the preload library prints at MPI_Finalize (rank 0), for every entry point "
                   "it interposes, how many calls went through each algorithm or to the MPI "
                   "library, and their time",
            .fallback = 0},
    EnvSpec{.name = "A2AV_INPLACE_CHUNK",
            .type = EnvType::integer,
            .doc = "bytes of staging for MPI_IN_PLACE with a contiguous type (above 2^30: 2^30; "
                   "below 1: the default)",
            .fallback = kMiB,
            .range = {1, kGiB, OutOfRange::fallback, OutOfRange::clamp}},
    EnvSpec{.name = "A2AV_COMM_IDUP",
            .type = EnvType::flag,
            .doc = "1: a nonblocking call's first use of a communicator sets a2av up with "
                   "MPI_Comm_idup, without waiting for the other ranks; 0: it runs the MPI "
                   "library's exchange until a blocking call or A2AV_Comm_prepare sets a2av up "
                   "(default 1, but 0 under Open MPI: its MPI_Comm_idup breaks the caller's other "
                   "nonblocking collectives on that communicator)",
            .fallback = kCommIdupByDefault},
    EnvSpec{.name = "A2AV_PRELOAD_PREPARE",
            .type = EnvType::flag,
            .doc = "1: the preload library sets a2av up on each communicator the program makes "
                   "(MPI_COMM_WORLD at MPI_Init, MPI_Comm_dup, MPI_Comm_split, ...) as it is made "
                   "(A2AV_Comm_prepare), so that nonblocking calls run a2av's exchanges from the "
                   "first; it makes communicator creation several times slower. Nonblocking "
                   "starts on a communicator not set up (MPI_Comm_idup's, or any under 0) go to "
                   "the MPI library until a blocking a2av call on it sets it up. 0: the first "
                   "blocking a2av call sets up (default 1 where A2AV_COMM_IDUP defaults to 0: "
                   "Open MPI)",
            .fallback = 1 - kCommIdupByDefault},
    EnvSpec{.name = "A2AV_PRELOAD_PLAN_STARTS",
            .type = EnvType::flag,
            .doc = "1: the preload's MPI_Start of a persistent all-to-all runs a plan (a2av's "
                   "blocking algorithms, node_aware across nodes) to completion, which MPI does "
                   "not allow: a program whose rank, after its start, waits for a message that a "
                   "peer sends only after its own start hangs. 0: the start only starts a2av's "
                   "nonblocking exchange (direct across nodes; the _c forms: the MPI library's), "
                   "which the MPI library's progress (Open MPI) or the program's waits and tests "
                   "(MPICH) complete",
            .fallback = 0},
    EnvSpec{.name = "A2AV_EMULATE_NODES",
            .type = EnvType::integer,
            .doc = "Q: each group of Q consecutive ranks of a node acts as a node of its own; 0 "
                   "(or negative): the nodes MPI_COMM_TYPE_SHARED finds",
            .fallback = 0,
            .range = {0, std::numeric_limits<int>::max(), OutOfRange::clamp, OutOfRange::fallback}},
    EnvSpec{.name = "A2AV_SHM_BYTES",
            .type = EnvType::integer,
            .doc = "bytes of shared_memory cells per rank, per communicator (rank 0's value "
                   "counts); 0 (or negative): no cells, shared_memory runs spread_out",
            .default_text = "min(1 MiB, 32 MiB / P)",
            .range = {0, std::numeric_limits<std::int64_t>::max(), OutOfRange::clamp,
                      OutOfRange::fallback}},
    EnvSpec{.name = "A2AV_SINGLE_COPY",
            .type = EnvType::flag,
            .doc = "0: no block is read straight from the sender's buffer (cross-memory "
                   "attach): shared_memory's large blocks (blocking and nonblocking), node_aware's "
                   "large blocks within a node and the sparse shared_memory's large messages go "
                   "as MPI messages",
            .fallback = 1},
    EnvSpec{.name = "A2AV_MAX_MESSAGE",
            .type = EnvType::integer,
            .doc = "bytes per point-to-point message piece; longer messages are split (for tests "
                   "of the splitting paths; out of range: the default)",
            .fallback = kGiB,
            .range = {64, kGiB, OutOfRange::fallback, OutOfRange::fallback}},
    EnvSpec{.name = "A2AV_MAX_IN_FLIGHT",
            .type = EnvType::integer,
            .doc = "point-to-point requests (messages or pieces, sends and receives together) "
                   "one exchange keeps in flight per rank at most, 8.. (a spec's in_flight=N "
                   "overrides it for its calls)",
            .fallback = 64,
            .range = {8, std::numeric_limits<int>::max(), OutOfRange::clamp, OutOfRange::clamp}},
    EnvSpec{.name = "A2AV_SIM_COPY_BANDWIDTH",
            .type = EnvType::number,
            .doc = "SimGrid builds: bytes/s at which a copy through a node's shared memory is "
                   "charged (scripts/simulate.sh sets the platform's loopback bandwidth); 0: free",
            .fallback = 0},
    EnvSpec{.name = "A2AV_SIM_POLL_NANOSECONDS",
            .type = EnvType::integer,
            .doc = "SimGrid builds: simulated nanoseconds one look at a shared-memory flag costs, "
                   "1..10^6 (default 100); more: a coarser spin, fewer simulation events",
            .fallback = 100,
            .range = {1, 1000000, OutOfRange::clamp, OutOfRange::clamp}},
};

// The index of `name` in kEnvironment if its type is one of `types` (any, if empty); a throw,
// which does not compile in a constant expression, otherwise.
template <std::size_t N>
constexpr std::size_t env_index(std::string_view name, const std::array<EnvType, N>& types) {
  for (std::size_t i = 0; i < kEnvironment.size(); ++i) {
    if (kEnvironment[i].name != name) continue;
    if (N == 0) return i;
    for (EnvType type : types)
      if (kEnvironment[i].type == type) return i;
    throw "this variable has another type in kEnvironment";
  }
  throw "no such variable in kEnvironment (core/environment.hpp)";
}

// A variable of kEnvironment, of one of `Types` (any, if none), named by a string literal.
template <EnvType... Types>
class EnvVar {
 public:
  // Implicit, so that readers pass the literal: env_flag("A2AV_VALIDATE").
  consteval EnvVar(const char* name)
      : index_(env_index(name, std::array<EnvType, sizeof...(Types)>{Types...})) {}
  std::size_t index() const { return index_; }
  std::string_view name() const { return kEnvironment[index_].name; }

 private:
  std::size_t index_;
};

// The accessor: the text of kEnvironment[index], read by getenv at its first use in the
// process and kept; null when unset. Every reader below goes through it.
const char* env_text_at(std::size_t index);

// Its raw text: env_text("A2AV_ALGORITHM"), or a variable of any type passed on.
inline const char* env_text(EnvVar<> variable) {
  return env_text_at(variable.index());
}
template <EnvType... Types>
const char* env_text(EnvVar<Types...> variable) {
  return env_text_at(variable.index());
}
bool env_flag(EnvVar<EnvType::flag> variable);
// The value, in range; none where unset (or out of range with OutOfRange::fallback) and the
// default is the reader's to compute.
std::optional<std::int64_t> env_integer(EnvVar<EnvType::integer> variable);
double env_number(EnvVar<EnvType::number> variable);
// The text, or the default when unset or empty (empty for a path).
std::string_view env_string(EnvVar<EnvType::string, EnvType::path> variable);

// How a variable's text reads (null: unset), as the readers above read it; for tests.
bool flag_value(const EnvSpec& v, const char* text);
std::optional<std::int64_t> integer_value(const EnvSpec& v, const char* text);
double number_value(const EnvSpec& v, const char* text);
std::string_view string_value(const EnvSpec& v, const char* text);

// A2AV_VERBOSE: rank 0 says what auto chose and why, and what shared memory it set up.
inline bool verbose() {
  static const bool on = env_flag("A2AV_VERBOSE");
  return on;
}

}  // namespace a2av
