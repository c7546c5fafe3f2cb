// data::line_parser alone: number forms, field counts, long lines.
#include <cmath>
#include <doctest/doctest.h>
#include <string>

#include "data/hashing.hpp"
#include "data/line_parser.hpp"

namespace {

// A 4-column schema: label, two dense, one categorical, ',' delimited.
data::resolved_schema small_schema() {
  data::schema_options s;
  s.delimiter = ',';
  s.label = 0;
  s.dense = {1, 2};
  s.categorical = {3};
  data::resolved_schema r;
  std::string error;
  REQUIRE(data::resolve_schema(s, nullptr, "test", &r, &error));
  return r;
}

struct parsed {
  bool ok = false;
  float label = -1;
  float dense[2] = {-1, -1};
  std::uint64_t cat[1] = {0};
  data::line_error error;
  std::string error_text; // copy of error.text, which points into the line
};

parsed parse(const data::resolved_schema& schema, const std::string& line) {
  data::line_parser parser(&schema);
  parsed p;
  p.ok = parser.parse(line, &p.label, p.dense, p.cat, &p.error);
  p.error_text = std::string(p.error.text);
  p.error.text = {};
  return p;
}

} // namespace

TEST_CASE("dense number forms") {
  const auto schema = small_schema();
  CHECK(parse(schema, "1,0,-0").dense[0] == 0.0f);
  CHECK(parse(schema, "1,0,-0").dense[1] == 0.0f);
  // 18 digits (fast path) and 22 digits (from_chars path) both work.
  CHECK(parse(schema, "1,999999999999999999,").dense[0] == static_cast<float>(std::log1p(999999999999999999.0)));
  CHECK(parse(schema, "1,1234567890123456789012,").dense[0] == static_cast<float>(std::log1p(1.234567890123456789012e21)));
  CHECK(parse(schema, "1,0.5,.25").dense[0] == static_cast<float>(std::log1p(0.5)));
  CHECK(parse(schema, "1,0.5,.25").dense[1] == static_cast<float>(std::log1p(0.25)));
  CHECK(parse(schema, "1,-3.5,4095").dense[0] == 0.0f);                                 // clamped
  CHECK(parse(schema, "1,4095,4096").dense[0] == static_cast<float>(std::log1p(4095.0))); // last table entry
  CHECK(parse(schema, "1,4095,4096").dense[1] == static_cast<float>(std::log1p(4096.0))); // first computed

  for (const char* bad : {"1,-,", "1,+,", "1,+-5,", "1,5x,", "1,0x10,", "1,1 ,", "1,--1,"}) {
    CAPTURE(bad);
    const auto p = parse(schema, bad);
    CHECK_FALSE(p.ok);
    CHECK(p.error.kind == data::line_error::bad_number);
    CHECK(p.error.column == 1);
  }
  for (const char* inf : {"1,inf,", "1,nan,", "1,1e400,", "1,-inf,"}) {
    CAPTURE(inf);
    const auto p = parse(schema, inf);
    CHECK_FALSE(p.ok);
    CHECK(p.error.kind == data::line_error::not_finite);
  }
}

TEST_CASE("labels and field counts") {
  const auto schema = small_schema();
  CHECK(parse(schema, "1.0").label == 1.0f);
  CHECK(parse(schema, "0.0").label == 0.0f);
  for (const char* bad : {"2", "-1", "0.5", "", "yes", "1 "}) {
    CAPTURE(bad);
    const auto p = parse(schema, bad);
    CHECK_FALSE(p.ok);
    CHECK(p.error.kind == data::line_error::bad_label);
    CHECK(p.error_text == bad);
  }
  // 4 fields is the most; the fifth, even empty, is one too many.
  CHECK(parse(schema, "1,2,3,x").ok);
  const auto five = parse(schema, "1,2,3,x,");
  CHECK_FALSE(five.ok);
  CHECK(five.error.kind == data::line_error::too_many_fields);
  CHECK(five.error.fields == 5);
  CHECK(data::describe(schema, five.error) == "expected at most 4 fields, got 5");
  // Line 1,2,3,x: the categorical is hashed as column 0.
  CHECK(parse(schema, "1,2,3,x").cat[0] == data::hash_categorical("x", 0));
  CHECK(parse(schema, "1,2,3,").cat[0] == data::hash_categorical("", 0));
  CHECK(parse(schema, "1,2,3,12345678").cat[0] == data::hash_categorical("12345678", 0)); // 8-byte path
}

TEST_CASE("delimiters found across the vector-scan block boundaries") {
  // Categorical fields of every length 0..70 put delimiters at every offset
  // of a 16/32-byte block and in the scalar tail.
  data::schema_options s;
  s.delimiter = '\t';
  s.label = 0;
  for (int c = 1; c <= 12; ++c)
    s.categorical.emplace_back(c);
  data::resolved_schema schema;
  std::string error;
  REQUIRE(data::resolve_schema(s, nullptr, "test", &schema, &error));
  data::line_parser parser(&schema);
  for (int len = 0; len <= 70; ++len) {
    CAPTURE(len);
    std::string line = "1";
    std::vector<std::string> values;
    for (int c = 0; c < 12; ++c) {
      values.push_back(std::string(static_cast<std::size_t>((len + c) % 71), static_cast<char>('a' + c)));
      line += "\t" + values.back();
    }
    float label = -1;
    std::uint64_t cat[12] = {};
    data::line_error err;
    REQUIRE(parser.parse(line, &label, nullptr, cat, &err));
    for (std::size_t c = 0; c < 12; ++c)
      CHECK(cat[c] == data::hash_categorical(values[c], c));
  }
}
