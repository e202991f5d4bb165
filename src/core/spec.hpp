// Algorithm specs of every family (alltoallv, in-place, redistribution, sparse):
// "name[:key=value[,key=value...]]", parsed by one parser into typed parameter values.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace a2av {

// One integer parameter of an algorithm, declared once as a constant object. Code reads a
// value through the object (`values[kRadix]`), never by its key, so a misspelt parameter
// does not compile.
struct Param {
  std::string_view key;
  std::int64_t min;
  std::int64_t max;
  std::int64_t fallback;  // the default
  std::string_view doc;
  std::string_view default_doc = {};  // what the default means when resolved at run time
};

// The values of one spec's parameters: every parameter of its algorithm, defaults filled in.
class ParamValues {
 public:
  // `param` must be one of the algorithm's (has()).
  std::int64_t operator[](const Param& param) const;
  bool has(const Param& param) const;
  void set(const Param& param, std::int64_t value);
  // In the algorithm's declaration order.
  const std::vector<std::pair<const Param*, std::int64_t>>& entries() const { return values_; }
  bool operator==(const ParamValues&) const = default;

 private:
  std::vector<std::pair<const Param*, std::int64_t>> values_;
};

// What the parser needs to know of one algorithm of a family.
struct SpecGrammar {
  std::string_view name;
  std::span<const Param* const> params;
};

struct ParsedSpec {
  std::size_t index = 0;  // of the algorithm, in the family's grammar
  ParamValues values;
  bool validate = false;  // validate=0|1, where the family accepts it
  int in_flight = 0;      // in_flight=N, where the family accepts it (0: not given)
};

// What a family of algorithms is called in messages, and whether every algorithm of it
// accepts validate=0|1 and in_flight=N (the bound on requests in flight, core/p2p.hpp).
struct SpecFamily {
  std::string_view prefix;  // "" (alltoallv), "in-place ", "sparse exchange ", ...
  bool accepts_validate;
  bool accepts_in_flight = false;
};

// Throws A2AV_ERR_ALGORITHM with a message that lists what is accepted.
ParsedSpec parse_spec(std::string_view text, std::span<const SpecGrammar> grammar,
                      const SpecFamily& family);

// An algorithm of the in-place, redistribution or sparse family, described once in its
// family's table: what the parser and `a2av algorithms` need (the alltoallv family's
// descriptors, alltoallv/algorithm.hpp, say more).
struct FamilyAlgorithm {
  std::string_view name{};
  std::string_view summary{};
  std::vector<const Param*> params{};
  std::string_view restrictions{};
  std::string_view fallback{};
  std::string_view source{};
};

// The family's table as the parser's grammar.
std::vector<SpecGrammar> grammar_of(std::span<const FamilyAlgorithm> table);

// "name:key=value,..." with every parameter of `values`.
std::string format_spec(std::string_view name, const ParamValues& values);

}  // namespace a2av
