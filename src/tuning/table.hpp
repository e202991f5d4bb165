// Tuning tables: JSON files of first-match rules (docs/tuning.md, schema in
// data/schemas/tuning.schema.json). Each rule names an algorithm spec and optional inclusive
// ranges of P, ranks per node, the largest and the mean block bytes and the sparsity;
// the first rule whose ranges all hold wins. Files are validated when loaded: a malformed
// file, an unknown key or algorithm is an A2AV_ERR_ALGORITHM naming the file and line.
#pragma once

#include "tuning/stats.hpp"

#include <optional>
#include <string>
#include <vector>

namespace a2av {

struct Range {
  double low, high;  // inclusive
  bool holds(double v) const { return low <= v && v <= high; }
};

struct TuningRule {
  std::optional<Range> comm_size, ranks_per_node, max_block_bytes, mean_block_bytes, sparsity;
  std::string algorithm;
  int line = 0;  // where the rule starts in its file
};

class TuningTable {
 public:
  static TuningTable load(const std::string& path);  // throws a2av::Error
  static TuningTable parse(const std::string& text, const std::string& name);

  // The first rule that matches, or null.
  const TuningRule* match(const ExchangeStats& stats) const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<TuningRule> rules_;
};

}  // namespace a2av
