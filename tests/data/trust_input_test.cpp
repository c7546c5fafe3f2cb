// Trust (issue 40, rows 13 and 17): data bytes are escaped in messages, a
// line has a bounded length, and a reader for a saved model refuses lines of
// another layout instead of reading shifted columns.
#include <doctest/doctest.h>

#include "data/line_source.hpp"
#include "data/printable.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

TEST_CASE("printable escapes control bytes, invalid UTF-8 and C1 controls, keeps UTF-8 text") {
  CHECK(data::printable("abc 1.5") == "abc 1.5");
  CHECK(data::printable("\x1b[31mred") == "\\x1b[31mred");    // ESC: an ANSI colour
  CHECK(data::printable("a\tb\nc\r\x7f") == "a\\x09b\\x0ac\\x0d\\x7f");
  CHECK(data::printable("back\\slash") == "back\\x5cslash"); // no ambiguity with escapes
  CHECK(data::printable("caf\xc3\xa9") == "caf\xc3\xa9");      // é, valid UTF-8
  CHECK(data::printable("\xc2\x9b") == "\\xc2\\x9b");          // U+009B, the C1 CSI
  CHECK(data::printable("\xff\xfe") == "\\xff\\xfe");          // not UTF-8
  CHECK(data::printable("\xe2\x82") == "\\xe2\\x82");          // truncated sequence
  CHECK(data::printable("\xc0\xaf") == "\\xc0\\xaf");          // overlong '/'
}

TEST_CASE("a malformed field's escape bytes are escaped in the reader's message") {
  temp_dir dir;
  const std::string path =
    dir.write("esc.tsv", criteo_line("1", {"1"}, {"a"}) + "\n" +
                           criteo_line("0", {"\x1b]0;title\x07"}, {}) + "\n");
  const auto r = read_all(options_for({path}));
  REQUIRE(r.stats.first_errors.size() == 1);
  const auto& m = r.stats.first_errors[0];
  CHECK(m.find('\x1b') == std::string::npos);
  CHECK(m.find('\x07') == std::string::npos);
  CHECK(m.find("\\x1b]0;title\\x07") != std::string::npos);
}

TEST_CASE("a line longer than max_line_bytes ends the read naming file and line") {
  temp_dir dir;
  const std::string good = criteo_line("1", {"1"}, {"a"});
  const std::string path = dir.write(
    "long.tsv", good + "\n" + good + "\n" + std::string(data::line_source::max_line_bytes + 1, '7') +
                  "\n" + good + "\n");
  auto o = options_for({path});
  o.chunk_bytes = 4096; // the buffer would have to grow past the bound
  const auto r = read_all(o);
  CHECK(r.all.size == 2);
  CHECK(r.error.find("long.tsv:3: line longer than 1048576 bytes") != std::string::npos);
  // A line of exactly the bound is a line (malformed here, not fatal).
  const std::string edge = dir.write(
    "edge.tsv", std::string(data::line_source::max_line_bytes, '7') + "\n" + good + "\n");
  const auto e = read_all(options_for({edge}));
  CHECK(e.error.empty());
  CHECK(e.all.size == 1);
  CHECK(e.stats.malformed == 1);
}

TEST_CASE("whole_lines: a line with fewer fields than the schema stops the reader") {
  temp_dir dir;
  const std::string line = criteo_line("1", {"1"}, {"a"});
  const std::string no_label = line.substr(2); // Criteo's test layout: 39 fields
  const std::string path = dir.write("test.tsv", line + "\n" + no_label + "\n" + line + "\n");
  auto o = options_for({path});
  const auto lax = read_all(o); // training: missing trailing fields are empty
  CHECK(lax.error.empty());
  o.whole_lines = true;
  const auto r = read_all(o);
  CHECK(r.all.size == 1);
  CHECK(r.error.find("test.tsv:2: expected 40 fields, got 39") != std::string::npos);
  CHECK(r.error.find("label column") != std::string::npos);
}
