#include "side_bench.hpp"

#include <mpi.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

namespace a2av::bench {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

double max_over_ranks(double value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

std::int64_t max_over_ranks(std::int64_t value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

int write_report(const BenchOptions& o, const std::function<void(std::ostream&)>& table,
                 const nlohmann::json& json) {
  std::ofstream file;
  if (!o.output.empty()) file.open(o.output);
  std::ostream& out = o.output.empty() ? std::cout : file;
  if (o.format == "json")
    out << json.dump(2) << "\n";
  else
    table(out);
  if (!o.json.empty()) std::ofstream(o.json) << json.dump(2) << "\n";
  return out ? 0 : 1;
}

}  // namespace a2av::bench
