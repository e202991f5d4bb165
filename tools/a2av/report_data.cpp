// CSV and JSON share one record per row, so the two can never disagree on a field.
#include "report.hpp"

#include <nlohmann/json.hpp>

namespace a2av::bench {
namespace {

using Json = nlohmann::ordered_json;

Json optional_int(const std::optional<std::int64_t>& value) {
  return value ? Json(*value) : Json();
}

Json record(const Report& r, const Row& row) {
  return {{"mpi_library", r.world.mpi_library},
          {"ranks", r.world.size},
          {"ranks_per_node", r.world.ranks_per_node},
          {"pattern", r.options.pattern},
          {"seed", r.options.seed},
          {"datatype", r.plan.datatype.name},
          {"datatype_bytes", r.plan.datatype.bytes},
          {"iterations", r.options.iterations},
          {"warmup", r.options.warmup},
          {"baseline", r.options.baseline},
          {"copy_bound", r.options.copy_bound},
          {"size", row.size},
          {"max_block_bytes", row.max_block_bytes},
          {"requested", row.requested},
          {"algorithm", row.algorithm},
          {"median_s", row.median_s},
          {"min_s", row.min_s},
          {"max_s", row.max_s},
          {"ratio", row.ratio},
          {"peak_temp_bytes", optional_int(row.peak_bytes)},
          {"bound_bytes", optional_int(row.bound_bytes)},
          {"max_in_flight", optional_int(row.max_in_flight)},
          {"validated", row.validated}};
}

// RFC 4180: specs and library names contain commas.
std::string csv_field(const Json& value) {
  if (value.is_null()) return "";
  if (!value.is_string()) return value.dump();
  std::string text = value.get<std::string>();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

void write_csv_line(std::ostream& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << fields[i];
  out << '\n';
}

}  // namespace

void write_csv(std::ostream& out, const Report& report) {
  bool header = true;
  for (const auto& row : report.rows) {
    const Json rec = record(report, row);
    std::vector<std::string> keys, values;
    for (const auto& [key, value] : rec.items()) {
      keys.push_back(key);
      values.push_back(csv_field(value));
    }
    if (header) write_csv_line(out, keys);
    header = false;
    write_csv_line(out, values);
  }
}

void write_json(std::ostream& out, const Report& report) {
  Json results = Json::array();
  for (const auto& row : report.rows) results.push_back(record(report, row));
  const Json doc = {{"schema", "a2av-bench/1"}, {"command", report.command}, {"results", results}};
  out << doc.dump(2) << '\n';
}

}  // namespace a2av::bench
