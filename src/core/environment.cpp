#include "core/environment.hpp"

#include <a2av/environment.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace a2av {
namespace {

std::string type_text(const EnvSpec& v) {
  switch (v.type) {
    case EnvType::flag:
      return "flag";
    case EnvType::integer:
      if (v.range.max == std::numeric_limits<std::int64_t>::max())
        return fmt::format("integer >= {}", v.range.min);
      return fmt::format("integer {}..{}", v.range.min, v.range.max);
    case EnvType::number:
      return "number";
    case EnvType::string:
      return "string";
    case EnvType::path:
      return "path";
  }
  return "";
}

std::string default_text(const EnvSpec& v) {
  if (v.type == EnvType::string || v.type == EnvType::path || !v.fallback)
    return std::string(v.default_text);
  return std::to_string(*v.fallback);
}

}  // namespace

const char* env_text_at(std::size_t index) {
  struct Cached {
    std::once_flag once;
    std::optional<std::string> text;
  };
  // Never destroyed: a reader may run at exit (the preload library's statistics).
  static auto& cache = *new std::array<Cached, kEnvironment.size()>;
  Cached& c = cache[index];
  std::call_once(c.once, [&] {
    // The one getenv of the library. The table's names are literals: null-terminated.
    if (const char* text = std::getenv(kEnvironment[index].name.data())) c.text = text;
  });
  return c.text ? c.text->c_str() : nullptr;
}

bool flag_value(const EnvSpec& v, const char* text) {
  if (!text || !*text) return v.fallback.value_or(0) != 0;
  return std::strcmp(text, "0") != 0;
}

std::optional<std::int64_t> integer_value(const EnvSpec& v, const char* text) {
  if (!text || !*text) return v.fallback;
  const std::int64_t value = std::atoll(text);
  if (value < v.range.min)
    return v.range.below == OutOfRange::clamp ? std::optional(v.range.min) : v.fallback;
  if (value > v.range.max)
    return v.range.above == OutOfRange::clamp ? std::optional(v.range.max) : v.fallback;
  return value;
}

double number_value(const EnvSpec& v, const char* text) {
  if (!text || !*text) return static_cast<double>(v.fallback.value_or(0));
  return std::strtod(text, nullptr);
}

std::string_view string_value(const EnvSpec& v, const char* text) {
  return text && *text ? std::string_view(text) : v.default_text;
}

bool env_flag(EnvVar<EnvType::flag> variable) {
  return flag_value(kEnvironment[variable.index()], env_text_at(variable.index()));
}

std::optional<std::int64_t> env_integer(EnvVar<EnvType::integer> variable) {
  return integer_value(kEnvironment[variable.index()], env_text_at(variable.index()));
}

double env_number(EnvVar<EnvType::number> variable) {
  return number_value(kEnvironment[variable.index()], env_text_at(variable.index()));
}

std::string_view env_string(EnvVar<EnvType::string, EnvType::path> variable) {
  return string_value(kEnvironment[variable.index()], env_text_at(variable.index()));
}

std::vector<EnvironmentVariable> environment_variables() {
  std::vector<EnvironmentVariable> out;
  for (const EnvSpec& v : kEnvironment)
    out.push_back({std::string(v.name), type_text(v), default_text(v), std::string(v.doc)});
  return out;
}

}  // namespace a2av
