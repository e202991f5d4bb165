// Count patterns for `a2av bench --pattern`: seeded P x P block-size matrices. Sources
// (docs/references.md has the papers, docs/patterns.md the table):
//   uniform          TuNA (Fan et al. [Fan24]), Section V-A: sizes uniform in 0..S.
//   normal           TuNA Section VI-C, Figure 16(a): mean 1000, stddev 240, blocks <= 1024.
//   power-law        TuNA Section VI-C, Figure 16(b): "power-law (exponential)", exponent 0.95;
//                    as in the authors' benchmark, a row is S * exponent^k (k = 0..P-1) shuffled.
//   fft-n1, fft-n2   TuNA Section VI-A, the FFT workloads N1 and N2.
//   zhuang1..4       Zhuang et al. [Zhuang09], Section 4, cases 1-4,
//                    with N/P = S bytes.
// Only the raw output of std::mt19937_64 (fully specified by the standard) is used; the
// arithmetic on it is ours, so a seed gives the same matrix with any standard library.
#include "patterns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>

namespace a2av::bench {
namespace {

using Rng = std::mt19937_64;

// ---- random numbers from raw engine output ----

// Uniform in [0, n), n > 0, without modulo bias: draws below 2^64 mod n are redrawn.
std::uint64_t below(Rng& rng, std::uint64_t n) {
  const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
  std::uint64_t r = rng();
  while (r < threshold) r = rng();
  return r % n;
}

// Uniform integer in lo..hi inclusive (hi - lo + 1 computed unsigned: hi may be INT64_MAX).
std::int64_t between(Rng& rng, std::int64_t lo, std::int64_t hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  return lo + static_cast<std::int64_t>(span == 0 ? rng() : below(rng, span));
}

// v >= 0 as a count, capped at S (a cast of a double at or past 2^63 would be undefined).
std::int64_t to_count(double v, std::int64_t S) {
  return v >= static_cast<double>(S) ? S : static_cast<std::int64_t>(v);
}

// Uniform in [0, 1) from the top 53 bits: every value exactly representable.
double unit(Rng& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Standard normal by Box-Muller (one value of the pair); 1 - unit() is in (0, 1], so log is finite.
double gaussian(Rng& rng) {
  const double u1 = 1.0 - unit(rng);
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

template <class T>
void shuffle(std::vector<T>& v, Rng& rng) {  // Fisher-Yates
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(rng, i)]);
}

// Exactly k of n positions marked, chosen uniformly (partial Fisher-Yates).
std::vector<bool> choose(int n, int k, Rng& rng) {
  std::vector<int> idx(n);
  for (int i = 0; i < n; ++i) idx[i] = i;
  std::vector<bool> marked(n, false);
  for (int i = 0; i < k; ++i) {
    std::swap(idx[i], idx[i + below(rng, n - i)]);
    marked[idx[i]] = true;
  }
  return marked;
}

// round(fraction * n), fraction in [0, 1].
int count_of(double fraction, int n) {
  return static_cast<int>(std::llround(fraction * n));
}

// ---- pattern table ----

struct Key {
  const char* name;
  double fallback;  // default
  double lo, hi;    // accepted range, inclusive
  bool integer;
  const char* what;
};

struct Context {
  const PatternSpec& spec;
  int P;
  std::int64_t S;
  Rng rng;
  double operator[](const std::string& key) const { return spec.params.at(key); }
};

using Generator = std::function<CountMatrix(Context&)>;

struct Pattern {
  const char* name;
  std::vector<Key> keys;
  const char* help;
  Generator make;
};

constexpr double kHuge = std::numeric_limits<double>::max();

CountMatrix filled(int P, const std::function<std::int64_t(int, int)>& f) {
  CountMatrix m(P, std::vector<std::int64_t>(P));
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < P; ++j) m[i][j] = f(i, j);
  return m;
}

CountMatrix make_uniform(Context& c) {
  return filled(c.P, [&](int, int) { return between(c.rng, 0, c.S); });
}

CountMatrix make_constant(Context& c) {
  return filled(c.P, [&](int, int) { return c.S; });
}

// Values outside 0..S are redrawn, as in the TuNA benchmark (a truncated normal rather than
// a spike at S); after kRedraws misses (mean far outside 0..S) the mean is clamped instead,
// so generation always ends.
std::int64_t normal_block(Context& c, double mean, double stddev) {
  constexpr int kRedraws = 1000;
  const auto top = static_cast<double>(c.S);
  for (int t = 0; t < kRedraws; ++t) {
    const double v = std::round(mean + stddev * gaussian(c.rng));
    if (v >= 0 && v <= top) return to_count(v, c.S);
  }
  return to_count(std::clamp(std::round(mean), 0.0, top), c.S);
}

CountMatrix make_normal(Context& c) {
  const double mean = c["mean"], stddev = c["stddev"];
  return filled(c.P, [&](int, int) { return normal_block(c, mean, stddev); });
}

// Every row holds floor(S * e^k), k = 0..P-1, in a random order: few large blocks, many
// small or zero ones. The powers come from repeated IEEE multiplication (no pow), so they
// are the same everywhere.
CountMatrix make_power_law(Context& c) {
  std::vector<std::int64_t> sizes(c.P);
  double v = static_cast<double>(c.S);
  for (auto& s : sizes) {
    s = to_count(v, c.S);
    v *= c["exponent"];
  }
  CountMatrix m(c.P);
  for (auto& row : m) {
    row = sizes;
    shuffle(row, c.rng);
  }
  return m;
}

// Silent senders and receivers first, then per sending row exactly round(zero_blocks * P)
// zero blocks; the rest are 1..S so that the zeros asked for are the only ones (S = 0: all 0).
CountMatrix make_sparse(Context& c) {
  const std::vector<bool> not_sending = choose(c.P, count_of(c["zero_ranks"], c.P), c.rng);
  const std::vector<bool> not_receiving = choose(c.P, count_of(c["zero_receivers"], c.P), c.rng);
  const int zeros_per_row = count_of(c["zero_blocks"], c.P);
  CountMatrix m(c.P, std::vector<std::int64_t>(c.P, 0));
  for (int i = 0; i < c.P; ++i) {
    if (not_sending[i]) continue;
    const std::vector<bool> zero = choose(c.P, zeros_per_row, c.rng);
    for (int j = 0; j < c.P; ++j)
      if (!zero[j] && !not_receiving[j])
        m[i][j] = between(c.rng, std::min<std::int64_t>(1, c.S), c.S);
  }
  return m;
}

// Zhuang Section 4 with N = S * P elements (bytes) per rank, d = (j - i) mod P.
// "d < P/4" is the exact rational bound (4d < P), so the self block (d = 0) is empty in
// cases 2 and 3 for every P > 1. At P = 1, d = 0 = P - 1 matches two branches; the
// d = P - 1 branch (the one large block) wins, as it is the case's defining block.
std::int64_t zhuang_block(int which, int P, std::int64_t S, int d) {
  const std::int64_t N = S * P;
  switch (which) {
    case 1:
      return S;
    case 2:
      return d == P - 1 ? N / 4 : (4 * std::int64_t{d} < P ? 0 : S);
    case 3:
      return d == P - 1 ? N / 2 : (2 * std::int64_t{d} < P ? 0 : S);
    default:
      return d == P - 1 ? N : 0;
  }
}

Generator zhuang(int which) {
  return [which](Context& c) {
    if (c.S > std::numeric_limits<std::int64_t>::max() / c.P)
      throw std::invalid_argument(
          fmt::format("zhuang{}: S * P overflows ({} * {})", which, c.S, c.P));
    return filled(c.P, [&](int i, int j) {
      return zhuang_block(which, c.P, c.S, ((j - i) % c.P + c.P) % c.P);
    });
  };
}

// TuNA VI-A, N1 = ceil(0.78125 P) * ceil(0.625 P) * 8: ranks below W = ceil(0.625 P) (the
// workers) fill their first C = ceil(0.78125 P) blocks with 8 FP64 (S = 64 in the paper),
// all else is empty. 0.625 = 5/8 and 0.78125 = 25/32, so the ceilings are exact integers.
CountMatrix make_fft_n1(Context& c) {
  const int workers = (5 * c.P + 7) / 8, filled_blocks = (25 * c.P + 31) / 32;
  return filled(c.P, [&](int i, int j) { return i < workers && j < filled_blocks ? c.S : 0; });
}

// TuNA VI-A, N2 = ((P - 1) * 32 + 8) * P complex: an FFTW transpose of ((P-1)*32+8) x P
// with 32 rows per rank and the 8 left over on the last; each rank but the last sends every
// rank 32 complex = 64 FP64 (S = 512 in the paper), the last sends 8 complex = S / 4.
CountMatrix make_fft_n2(Context& c) {
  return filled(c.P, [&](int i, int) { return i == c.P - 1 ? c.S / 4 : c.S; });
}

CountMatrix make_one_hot(Context& c) {
  CountMatrix m(c.P, std::vector<std::int64_t>(c.P, 0));
  for (auto& row : m) row[below(c.rng, c.P)] = c.S;
  return m;
}

CountMatrix make_all_to_one(Context& c) {
  if (c["root"] >= c.P)  // compared as a double: the value may not fit an int
    throw std::invalid_argument(fmt::format(
        "all-to-one: root={} is not a rank (P = {}): expected 0..{}", c["root"], c.P, c.P - 1));
  const auto root = static_cast<int>(c["root"]);
  return filled(c.P, [&](int, int j) { return j == root ? c.S : 0; });
}

CountMatrix read_matrix(const std::string& path, int P);

CountMatrix make_file(Context& c) {
  return read_matrix(c.spec.path, c.P);
}

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> all = {
      {"uniform", {}, "every block uniform random in 0..S (TuNA V-A)", make_uniform},
      {"constant", {}, "every block S", make_constant},
      {"normal",
       {{"mean", 1000, 0, kHuge, false, "mean block size, bytes"},
        {"stddev", 240, 0, kHuge, false, "standard deviation, bytes"}},
       "normal(mean, stddev) rounded, redrawn outside 0..S (TuNA VI-C, Fig. 16a, S=1024)",
       make_normal},
      {"power-law",
       {{"exponent", 0.95, 0, 1, false, "ratio of successive sizes, 0..1"}},
       "each row: floor(S*exponent^k), k=0..P-1, shuffled (TuNA VI-C, Fig. 16b)",
       make_power_law},
      {"sparse",
       {{"zero_blocks", 0.5, 0, 1, false, "fraction of each sending row forced to 0"},
        {"zero_ranks", 0, 0, 1, false, "fraction of ranks that send nothing"},
        {"zero_receivers", 0, 0, 1, false, "fraction of ranks that receive nothing"}},
       "chosen zero blocks/rows/columns, other blocks uniform in 1..S",
       make_sparse},
      {"zhuang1", {}, "every block S = N/P (Zhuang Sec. 4 case-1)", zhuang(1)},
      {"zhuang2",
       {},
       "d=(j-i) mod P: 0 if 4d<P, N/4=S*P/4 if d=P-1, else S (Zhuang case-2)",
       zhuang(2)},
      {"zhuang3",
       {},
       "d=(j-i) mod P: 0 if 2d<P, N/2=S*P/2 if d=P-1, else S (Zhuang case-3)",
       zhuang(3)},
      {"zhuang4",
       {},
       "every rank sends N=S*P to rank i-1, nothing else (Zhuang case-4)",
       zhuang(4)},
      {"fft-n1",
       {},
       "ranks < ceil(5P/8) send S to ranks < ceil(25P/32) (TuNA VI-A, N1; S=64)",
       make_fft_n1},
      {"fft-n2",
       {},
       "ranks < P-1 send S to all, rank P-1 sends S/4 (TuNA VI-A, N2; S=512)",
       make_fft_n2},
      {"one-hot",
       {},
       "every rank sends S to one seeded random destination of its own",
       make_one_hot},
      {"all-to-one",
       {{"root", 0, 0, kHuge, true, "the receiving rank"}},
       "every rank sends S to root, nothing else",
       make_all_to_one},
      {"file",
       {},
       "P lines of P non-negative integers, line i: bytes rank i sends each rank",
       make_file},
  };
  return all;
}

std::string accepted_names() {
  std::string out;
  for (const auto& p : patterns())
    out += fmt::format("{}{}", out.empty() ? "" : ", ",
                       p.name == std::string("file") ? "file:PATH" : p.name);
  return out;
}

std::string accepted_keys(const Pattern& p) {
  if (p.keys.empty()) return "it takes no parameters";
  std::string out;
  for (const auto& k : p.keys) out += fmt::format("{}{}", out.empty() ? "" : ", ", k.name);
  return "accepted: " + out;
}

const Pattern& find_pattern(const std::string& name) {
  for (const auto& p : patterns())
    if (name == p.name) return p;
  throw std::invalid_argument(
      fmt::format("unknown pattern '{}'; accepted: {}", name, accepted_names()));
}

const Key& find_key(const Pattern& p, const std::string& key) {
  for (const auto& k : p.keys)
    if (key == k.name) return k;
  throw std::invalid_argument(
      fmt::format("pattern '{}': unknown key '{}'; {}", p.name, key, accepted_keys(p)));
}

std::string range_of(const Key& k) {
  const std::string kind = k.integer ? "an integer" : "a number";
  if (k.hi == kHuge) return fmt::format("{} >= {}", kind, k.lo);
  return fmt::format("{} in {}..{}", kind, k.lo, k.hi);
}

void check_value(const Pattern& p, const Key& k, double v, std::string_view text) {
  if (!std::isfinite(v) || v < k.lo || v > k.hi || (k.integer && v != std::floor(v)))
    throw std::invalid_argument(fmt::format("pattern '{}': bad value '{}' for {} ({}): expected {}",
                                            p.name, text, k.name, k.what, range_of(k)));
}

// Strict: the whole text is one number (no trailing characters); nan/inf fail the range.
double parse_value(const Pattern& p, const Key& k, std::string_view text) {
  double v = std::numeric_limits<double>::quiet_NaN();
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    v = std::numeric_limits<double>::quiet_NaN();
  check_value(p, k, v, text);
  return v;
}

// Checks every given key and fills in the defaults; the one path for parse_pattern and for
// specs built by hand.
PatternSpec normalized(const PatternSpec& spec) {
  const Pattern& p = find_pattern(spec.name);
  PatternSpec out = spec;
  for (const auto& [key, value] : spec.params)
    check_value(p, find_key(p, key), value, fmt::format("{}", value));
  for (const auto& k : p.keys) out.params.try_emplace(k.name, k.fallback);
  if (out.name == "file" && out.path.empty())
    throw std::invalid_argument("pattern 'file' needs a path: file:PATH");
  return out;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t pos = 0;;) {
    const std::size_t next = text.find(sep, pos);
    parts.push_back(text.substr(pos, next - pos));
    if (next == std::string_view::npos) return parts;
    pos = next + 1;
  }
}

void parse_params(const Pattern& p, std::string_view list, PatternSpec& spec) {
  for (std::string_view item : split(list, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument(fmt::format("pattern '{}': expected key=value, got '{}'; {}",
                                              p.name, item, accepted_keys(p)));
    const std::string key(item.substr(0, eq));
    const Key& k = find_key(p, key);
    if (spec.params.count(key))
      throw std::invalid_argument(fmt::format("pattern '{}': key '{}' given twice", p.name, key));
    spec.params[key] = parse_value(p, k, item.substr(eq + 1));
  }
}

// ---- file:PATH ----

[[noreturn]] void file_error(const std::string& path, int line, const std::string& what) {
  throw std::invalid_argument(fmt::format("pattern file '{}' line {}: {}", path, line, what));
}

std::int64_t parse_count(const std::string& path, int line, const std::string& token, int P) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec == std::errc::result_out_of_range)
    file_error(path, line, fmt::format("'{}' is out of range for a 64-bit count", token));
  if (ec != std::errc() || end != token.data() + token.size())
    file_error(path, line,
               fmt::format("'{}' is not an integer; expected {} non-negative integers", token, P));
  if (v < 0) file_error(path, line, fmt::format("negative block size {}", v));
  return v;
}

// Blank lines and '#' comments are skipped; every other line is one sender's row.
CountMatrix read_matrix(const std::string& path, int P) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("pattern file '{}': cannot open it", path));
  CountMatrix m;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    std::istringstream tokens(text.substr(0, text.find('#')));
    std::vector<std::int64_t> row;
    for (std::string token; tokens >> token;) row.push_back(parse_count(path, line, token, P));
    if (row.empty()) continue;
    if (static_cast<int>(m.size()) == P)
      file_error(path, line, fmt::format("more than P = {} rows (one per sender expected)", P));
    if (static_cast<int>(row.size()) != P)
      file_error(path, line, fmt::format("{} values, expected P = {}", row.size(), P));
    m.push_back(std::move(row));
  }
  if (static_cast<int>(m.size()) != P)
    file_error(path, line, fmt::format("file ends after {} rows, expected P = {}", m.size(), P));
  return m;
}

}  // namespace

PatternSpec parse_pattern(std::string_view text) {
  constexpr std::string_view kFile = "file:";
  if (text.substr(0, kFile.size()) == kFile)  // the rest is the path, ':' and ',' included
    return normalized(PatternSpec{"file", {}, std::string(text.substr(kFile.size()))});
  const std::size_t colon = text.find(':');
  PatternSpec spec{std::string(text.substr(0, colon)), {}, {}};
  const Pattern& p = find_pattern(spec.name);
  if (colon != std::string_view::npos) parse_params(p, text.substr(colon + 1), spec);
  return normalized(spec);
}

CountMatrix make_counts(const PatternSpec& pattern, int size, std::int64_t max_block,
                        std::uint64_t seed) {
  if (size < 1) throw std::invalid_argument(fmt::format("pattern: P = {}, expected >= 1", size));
  if (max_block < 0)
    throw std::invalid_argument(fmt::format("pattern: S = {}, expected >= 0", max_block));
  const PatternSpec spec = normalized(pattern);
  Context c{spec, size, max_block, Rng(seed)};
  return find_pattern(spec.name).make(c);
}

std::vector<std::string> pattern_help() {
  std::vector<std::string> lines;
  for (const auto& p : patterns()) {
    std::string keys;
    for (const auto& k : p.keys)
      keys += fmt::format("{}{}={}", keys.empty() ? ":" : ",", k.name, k.fallback);
    const std::string name = p.name == std::string("file") ? "file:PATH" : p.name + keys;
    lines.push_back(fmt::format("{} - {}", name, p.help));
  }
  return lines;
}

}  // namespace a2av::bench
