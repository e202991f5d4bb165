// The table of environment variables (core/environment.hpp): each variable reads its text as
// the code before the table did (the former readers are kept here as references), and the
// table is well formed.
#include "core/environment.hpp"

#include <a2av/environment.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace a2av {
namespace {

const EnvSpec& spec(EnvVar<> variable) {
  return kEnvironment[variable.index()];
}

// Texts a user might set; null is unset.
const std::vector<const char*> kTexts = {nullptr,      "",           "0",
                                         "1",          "-1",         "-5",
                                         "7",          "63",         "64",
                                         "65",         "100",        "4096",
                                         "1048576",    "1073741823", "1073741824",
                                         "1073741825", "5000000000", "-5000000000",
                                         "abc",        "12abc",      " 42",
                                         "0x10",       "yes",        "true",
                                         "false",      "2147483647", "9223372036854775807"};

// Texts within int (the former A2AV_EMULATE_NODES reader used atoi).
bool fits_int(const char* text) {
  if (!text) return true;
  const long long value = std::atoll(text);
  return value >= -2147483647LL - 1 && value <= 2147483647LL;
}

TEST(Environment, FlagsReadAsBefore) {
  auto set_not_empty_not_zero = [](const char* value) {  // env_flag(), A2AV_PRELOAD_STATS
    return value && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
  };
  auto unset_or_not_zero = [](const char* value) {  // A2AV_AGREE_ERRORS
    return !value || std::strcmp(value, "0") != 0;
  };
  for (const char* text : kTexts) {
    const std::string shown = text ? text : "(unset)";
    EXPECT_EQ(flag_value(spec("A2AV_VALIDATE"), text), set_not_empty_not_zero(text)) << shown;
    EXPECT_EQ(flag_value(spec("A2AV_VERBOSE"), text), set_not_empty_not_zero(text)) << shown;
    EXPECT_EQ(flag_value(spec("A2AV_PRELOAD_STATS"), text), set_not_empty_not_zero(text)) << shown;
    EXPECT_EQ(flag_value(spec("A2AV_AGREE_ERRORS"), text), unset_or_not_zero(text)) << shown;
  }
}

TEST(Environment, IntegersReadAsBefore) {
  auto max_message = [](const char* text) {
    const std::int64_t value = text ? std::atoll(text) : 0;
    return value >= 64 && value <= (std::int64_t{1} << 30) ? value : std::int64_t{1} << 30;
  };
  auto inplace_chunk = [](const char* text) {
    const std::int64_t value = text ? std::atoll(text) : 0;
    return value >= 1 ? std::min<std::int64_t>(value, std::int64_t{1} << 30)
                      : std::int64_t{1} << 20;
  };
  auto emulate_nodes = [](const char* text) { return text ? std::max(0, std::atoi(text)) : 0; };
  // Unset or empty: the default, which depends on P (std::nullopt here).
  auto shm_bytes = [](const char* asked) -> std::optional<std::int64_t> {
    if (asked && *asked) return std::max<std::int64_t>(0, std::atoll(asked));
    return std::nullopt;
  };
  for (const char* text : kTexts) {
    const std::string shown = text ? text : "(unset)";
    EXPECT_EQ(integer_value(spec("A2AV_MAX_MESSAGE"), text), max_message(text)) << shown;
    EXPECT_EQ(integer_value(spec("A2AV_INPLACE_CHUNK"), text), inplace_chunk(text)) << shown;
    EXPECT_EQ(integer_value(spec("A2AV_SHM_BYTES"), text), shm_bytes(text)) << shown;
    if (fits_int(text)) {
      EXPECT_EQ(integer_value(spec("A2AV_EMULATE_NODES"), text), emulate_nodes(text)) << shown;
    }
  }
}

TEST(Environment, NumbersAndStringsReadAsBefore) {
  for (const char* text : kTexts) {
    const std::string shown = text ? text : "(unset)";
    EXPECT_EQ(number_value(spec("A2AV_SIM_COPY_BANDWIDTH"), text),
              text ? std::strtod(text, nullptr) : 0.0)
        << shown;
    const std::string_view given = text && *text ? text : "";
    EXPECT_EQ(string_value(spec("A2AV_ALGORITHM"), text), text && *text ? given : "auto") << shown;
    EXPECT_EQ(string_value(spec("A2AV_SPARSE_ALGORITHM"), text), text && *text ? given : "auto")
        << shown;
    EXPECT_EQ(string_value(spec("A2AV_TUNING_FILE"), text), given) << shown;
    EXPECT_EQ(string_value(spec("A2AV_MACHINE_FILE"), text), given) << shown;
  }
}

TEST(Environment, TableIsWellFormed) {
  std::set<std::string_view> names;
  for (const EnvSpec& v : kEnvironment) {
    EXPECT_TRUE(v.name.starts_with("A2AV_")) << v.name;
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " is listed twice";
    EXPECT_FALSE(v.doc.empty()) << v.name;
    EXPECT_EQ(v.doc.find('\n'), std::string_view::npos) << v.name;
    switch (v.type) {
      case EnvType::flag:
        ASSERT_TRUE(v.fallback) << v.name;
        EXPECT_TRUE(*v.fallback == 0 || *v.fallback == 1) << v.name;
        break;
      case EnvType::integer:
        EXPECT_LE(v.range.min, v.range.max) << v.name;
        if (v.fallback) {
          EXPECT_GE(*v.fallback, v.range.min) << v.name;
          EXPECT_LE(*v.fallback, v.range.max) << v.name;
        } else {
          EXPECT_FALSE(v.default_text.empty()) << v.name << ": a computed default says how";
        }
        break;
      case EnvType::number:
        EXPECT_TRUE(v.fallback) << v.name;
        break;
      case EnvType::string:
        EXPECT_FALSE(v.default_text.empty()) << v.name;
        break;
      case EnvType::path:
        EXPECT_TRUE(v.default_text.empty()) << v.name << ": a path's default is none";
        break;
    }
  }
}

TEST(Environment, PublicTableFollowsTheLibrarysTable) {
  const std::vector<EnvironmentVariable> all = environment_variables();
  ASSERT_EQ(all.size(), kEnvironment.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].name, kEnvironment[i].name);
  const EnvironmentVariable& max_message = all[EnvVar<>("A2AV_MAX_MESSAGE").index()];
  EXPECT_EQ(max_message.type, "integer 64..1073741824");
  EXPECT_EQ(max_message.default_value, "1073741824");
  const EnvironmentVariable& shm = all[EnvVar<>("A2AV_SHM_BYTES").index()];
  EXPECT_EQ(shm.type, "integer >= 0");
  EXPECT_EQ(shm.default_value, "min(1 MiB, 32 MiB / P)");
  EXPECT_EQ(all[EnvVar<>("A2AV_AGREE_ERRORS").index()].default_value, "1");
  EXPECT_EQ(all[EnvVar<>("A2AV_TUNING_FILE").index()].default_value, "");
}

}  // namespace
}  // namespace a2av
