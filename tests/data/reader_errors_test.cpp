// Malformed lines (counted, reported as FILE:LINE), strict mode, missing files.
#include <doctest/doctest.h>

#include "data/hashing.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

namespace {

const std::string good = criteo_line("1", {"1"}, {"a"});

// Nine lines, six malformed ones, one of each kind.
std::string bad_file_text() {
  return good + "\n" +                                   // 1 ok
         criteo_line("2", {"1"}, {"a"}) + "\n" +         // 2 label 2
         criteo_line("0", {"1", "2", "abc"}, {}) + "\n" + // 3 I3 not a number
         criteo_line("0", {}, {}) + "\textra\n" +        // 4 41 fields
         good + "\n" +                                   // 5 ok
         "\n" +                                          // 6 empty line in the middle
         criteo_line("0", {"inf"}, {}) + "\n" +          // 7 I1 not finite
         "\t1\t2\n" +                                    // 8 empty label
         good + "\n";                                    // 9 ok
}

} // namespace

TEST_CASE("each malformed kind is counted and reported with file:line") {
  temp_dir dir;
  const std::string path = dir.write("bad.tsv", bad_file_text());
  auto o = options_for({path});
  o.max_logged_errors = 10;
  const auto r = read_all(o);
  REQUIRE(r.open_error.empty());
  CHECK(r.error.empty()); // skipping is not fatal
  CHECK(r.all.size == 3); // lines 1, 5, 9
  CHECK(r.stats.examples == 3);
  CHECK(r.stats.malformed == 6);
  CHECK(r.stats.lines == 9);
  REQUIRE(r.stats.first_errors.size() == 6);
  CHECK(r.stats.first_errors[0] == path + ":2: column label: expected a label 0 or 1, got '2'");
  CHECK(r.stats.first_errors[1] == path + ":3: column I3: expected a number, got 'abc'");
  CHECK(r.stats.first_errors[2] == path + ":4: expected at most 40 fields, got 41");
  CHECK(r.stats.first_errors[3] == path + ":6: empty line: expected a label and up to 40 fields");
  CHECK(r.stats.first_errors[4] == path + ":7: column I1: expected a finite number, got 'inf'");
  CHECK(r.stats.first_errors[5] == path + ":8: column label: expected a label 0 or 1, got ''");
  // The good lines are the ones returned: all three are `good`.
  CHECK(r.all.cat[0] == data::hash_categorical("a", 0));
  CHECK(r.all.cat[26] == data::hash_categorical("a", 0));
}

TEST_CASE("more malformed lines than logged messages: all are counted") {
  temp_dir dir;
  std::string text;
  for (int i = 0; i < 7; ++i)
    text += "x\n" + good + "\n"; // 7 bad labels on lines 1, 3, ..., 13
  const auto r = read_all(options_for({dir.write("many.tsv", text)}));
  CHECK(r.stats.malformed == 7);
  CHECK(r.stats.examples == 7);
  REQUIRE(r.stats.first_errors.size() == 5); // default max_logged_errors
  CHECK(r.stats.first_errors[4] == dir.path("many.tsv") + ":9: column label: expected a label 0 or 1, got 'x'");
}

TEST_CASE("more fields than any schema column, long field text is shortened") {
  temp_dir dir;
  const std::string long_text(100, 'z');
  const auto r = read_all(options_for({dir.write("long.tsv", criteo_line("1", {long_text}, {}) + "\n")}));
  REQUIRE(r.stats.first_errors.size() == 1);
  // 40 characters shown, then "...".
  CHECK(r.stats.first_errors[0] ==
        dir.path("long.tsv") + ":1: column I1: expected a number, got '" + std::string(40, 'z') + "...'");
  const auto blanks = read_all(options_for({dir.write("sp.tsv", "1\t 5\n")}));
  CHECK(blanks.stats.malformed == 1); // " 5": no blanks around numbers
}

TEST_CASE("strict mode stops at the first malformed line, naming file and line") {
  temp_dir dir;
  const std::string path = dir.write("strict.tsv", bad_file_text());
  auto o = options_for({path});
  o.strict = true;
  auto rd = data::reader::open(o, nullptr);
  REQUIRE(rd);
  data::batch b;
  CHECK_FALSE(rd->next(b, 100));
  CHECK(rd->error() == path + ":2: column label: expected a label 0 or 1, got '2'");
  CHECK(b.size == 1); // line 1, read before the failure, stays in the batch
  CHECK(rd->statistics().malformed == 1);
  CHECK_FALSE(rd->next(b, 100)); // stays stopped
  CHECK(b.size == 1);

  // An empty line in the middle is fatal too, at its own line number.
  auto o2 = options_for({dir.write("blank.tsv", good + "\n" + good + "\n\n" + good + "\n")});
  o2.strict = true;
  const auto r = read_all(o2);
  CHECK(r.error == dir.path("blank.tsv") + ":3: empty line: expected a label and up to 40 fields");
  CHECK(r.all.size == 2);
}

TEST_CASE("strict mode on a clean file reads everything") {
  temp_dir dir;
  auto o = options_for({dir.write("clean.tsv", good + "\n" + good + "\n\n")});
  o.strict = true;
  const auto r = read_all(o);
  CHECK(r.error.empty());
  CHECK(r.all.size == 2);
}

TEST_CASE("a missing file is named in the open error") {
  temp_dir dir;
  const std::string missing = dir.path("nope.tsv");
  std::string error;
  CHECK(data::reader::open(options_for({missing}), &error) == nullptr);
  CHECK(error == "cannot open '" + missing + "': No such file or directory");

  // Also when it is the second of two files: open() checks them all.
  const std::string ok = dir.write("ok.tsv", good + "\n");
  error.clear();
  CHECK(data::reader::open(options_for({ok, missing}), &error) == nullptr);
  CHECK(error == "cannot open '" + missing + "': No such file or directory");

  // A folder is read (reader_input_test); one without files is refused.
  temp_dir empty;
  error.clear();
  CHECK(data::reader::open(options_for({empty.path("")}), &error) == nullptr);
  CHECK(error.find("the folder holds no data file") != std::string::npos);

  error.clear();
  CHECK(data::reader::open(options_for({}), &error) == nullptr);
  CHECK(error == "no input files given");

  auto o = options_for({ok});
  o.part = 2;
  o.num_parts = 2;
  CHECK(data::reader::open(o, &error) == nullptr);
  CHECK(error == "input part 2 of 2 is out of range: expected 0 <= part < num_parts");
}
