// The algorithm list of `a2av bench`: comma-separated specs, "all", and the --radix and
// --block-count sweeps, expanded into the specs to run and checked against a2av's parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace a2av::bench {

// Splits a comma-separated list of specs. Specs contain commas themselves, so an item with
// '=' but no ':' continues the previous spec: "tuna:radix=2,batch=1,spread_out" is two specs.
std::vector<std::string> split_specs(std::string_view list);

// A --radix value for P ranks: an integer >= 2, "sqrtP" (ceil(sqrt(P))) or "P". Values
// below 2 (P = 1) become 2, which the library clamps to P. Throws std::invalid_argument.
int radix_value(std::string_view text, int size);

// `spec` with key=value set, replacing an existing value of key.
std::string with_param(std::string_view spec, std::string_view key, std::int64_t value);

// The specs to run: `list` split ("all" is every registered algorithm, shared_memory only
// when the P ranks fit one node of Q), each tuna-family
// spec repeated over `radices` and each scattered or hierarchical spec over `block_counts`
// (plain tuna, or scattered, is added when a sweep is given and no spec it applies to is
// listed), duplicates dropped. Every spec is checked with a2av's own parser for P ranks and
// Q ranks per node; a bad one throws a2av::Error with the library's message.
std::vector<std::string> expand_specs(std::string_view list, const std::vector<int>& radices,
                                      const std::vector<std::int64_t>& block_counts, int size,
                                      int ranks_per_node);

}  // namespace a2av::bench
