#include "alltoallv/registry.hpp"

#include <vector>

namespace a2av {
namespace {

const std::vector<SpecGrammar>& grammar() {
  static const std::vector<SpecGrammar> grammar = [] {
    std::vector<SpecGrammar> out;
    for (const AlgorithmDescriptor* a : algorithm_table()) out.push_back({a->name, a->params});
    return out;
  }();
  return grammar;
}

}  // namespace

// auto is resolved by the driver before anything runs (tuning/selector.cpp).
const AlgorithmDescriptor& auto_algorithm() {
  static const AlgorithmDescriptor d{
      .name = "auto",
      .summary = "picks one of the others from P, the nodes and the largest block (the default)",
      .source = "docs/algorithms.md, section auto",
      .nonblocking = NonblockingSchedule::shared_memory,
      .test_specs = {{"auto"}},
  };
  return d;
}

std::span<const AlgorithmDescriptor* const> algorithm_table() {
#define A2AV_LIST_ALGORITHM(name) &name##_algorithm(),
  static const std::vector<const AlgorithmDescriptor*> table = {
      A2AV_ALLTOALLV_ALGORITHMS(A2AV_LIST_ALGORITHM)};
#undef A2AV_LIST_ALGORITHM
  return table;
}

Spec parse_spec(std::string_view text) {
  ParsedSpec parsed = parse_spec(text, grammar(), {"", true, true});
  return {algorithm_table()[parsed.index], std::move(parsed.values), parsed.validate,
          parsed.in_flight};
}

std::string describe(const Spec& spec, const Topology& topology) {
  Spec shown = spec;
  if (spec.algorithm->resolve) spec.algorithm->resolve(shown, topology);
  return format_spec(shown.algorithm->name, shown.params);
}

}  // namespace a2av
