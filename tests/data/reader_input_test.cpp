// What data.train / data.eval may name (data/input_files.hpp): folders and
// patterns in byte order of name, standard input read once, and lines
// without the label column (reader_options::labels).
#include <doctest/doctest.h>

#include <cstdio>

#include "data/input_files.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

namespace {

const std::string line1 = criteo_line("1", {"1"}, {"aa"}), line2 = criteo_line("0", {"2"}, {"bb"}),
                  line3 = criteo_line("1", {"3"}, {"cc"});

std::vector<std::string> expand(const std::vector<std::string>& entries, std::string* error) {
  std::vector<std::string> files;
  if (!data::expand_inputs(entries, &files, error))
    files.clear();
  return files;
}

} // namespace

TEST_CASE("a folder reads its files in byte order of name; a pattern likewise; each may be empty") {
  temp_dir dir;
  const std::string d = dir.path("");
  // Written out of order; "part-10" sorts before "part-9" (byte order).
  dir.write("part-9.tsv", line1 + "\n");
  dir.write("part-10.tsv", line2 + "\n");
  dir.write("part-08.tsv", line3 + "\n");
  dir.write(".hidden.tsv", "junk\n");
  dir.write("part-9.tsv.meta.json", "{}\n");
  std::filesystem::create_directories(dir.path("sub"));
  dir.write("sub/deeper.tsv", "junk\n");
  std::string error;
  const auto files = expand({d}, &error);
  CHECK(error.empty());
  CHECK(files == std::vector<std::string>{dir.path("part-08.tsv"), dir.path("part-10.tsv"),
                                          dir.path("part-9.tsv")});
  const auto r = read_all(options_for({d}));
  REQUIRE(r.open_error.empty());
  CHECK(r.stats.malformed == 0); // the hidden file, the sidecar and sub/ are not read
  CHECK(r.all.labels == std::vector<float>{1, 0, 1}); // part-08, part-10, part-9

  CHECK(expand({dir.path("part-*.tsv"), dir.path("part-08.tsv")}, &error) ==
        std::vector<std::string>{dir.path("part-08.tsv"), dir.path("part-10.tsv"), dir.path("part-9.tsv"),
                                 dir.path("part-08.tsv")});

  CHECK(expand({dir.path("day_*.gz")}, &error).empty());
  CHECK(error == "'" + dir.path("day_*.gz") + "' matches no file (expected a pattern like data/day_*.gz)");
  std::filesystem::create_directories(dir.path("empty"));
  CHECK(expand({dir.path("empty")}, &error).empty());
  CHECK(error.rfind("'" + dir.path("empty") + "': the folder holds no data file", 0) == 0);
  CHECK(data::reader::open(options_for({dir.path("nothing-*")}), &error) == nullptr);
  CHECK(error.find("matches no file") != std::string::npos);
}

TEST_CASE("standard input '-' is read once, by one reader") {
  temp_dir dir;
  const std::string file = dir.write("in.tsv", line1 + "\n" + line2 + "\n" + line3 + "\n");
  REQUIRE(std::freopen(file.c_str(), "rb", stdin) != nullptr);
  std::string error;
  auto o = options_for({"-"});
  o.num_parts = 2;
  CHECK(data::reader::open(o, &error) == nullptr);
  CHECK(error.rfind("standard input ('-') cannot be split into 2 parts", 0) == 0);

  // Opening probes (a config check does) and a later reader still gets every byte.
  CHECK(data::reader::open(options_for({"-"}), &error) != nullptr);
  const auto r = read_all(options_for({"-"}));
  REQUIRE(r.open_error.empty());
  CHECK(r.error.empty());
  CHECK(r.all.labels == std::vector<float>{1, 0, 1});
  CHECK(r.stats.bytes == std::filesystem::file_size(file));

  const auto again = read_all(options_for({"-"}));
  CHECK(again.all.size == 0);
  CHECK(again.error.rfind("standard input ('-') was already read: it can be read once only", 0) == 0);
}

TEST_CASE("lines without the label column: absent, or recognised by their width (Criteo's test file)") {
  temp_dir dir;
  const auto drop_label = [](const std::string& l) { return l.substr(l.find('\t') + 1); };
  const std::string labelled = dir.write("l.tsv", line1 + "\n" + line2 + "\n" + line3 + "\n");
  const std::string bare =
    dir.write("u.tsv", drop_label(line1) + "\n" + drop_label(line2) + "\n" + drop_label(line3) + "\n");
  auto o = options_for({labelled});
  o.whole_lines = true;
  const auto want = read_all(o);
  REQUIRE(want.all.size == 3);

  // Today's reader (labels required) refuses the 39-column file.
  o.files = {bare};
  auto r = read_all(o);
  CHECK(r.error.find("expected 40 fields, got 39") != std::string::npos);

  for (auto mode : {data::label_presence::absent, data::label_presence::either}) {
    o.labels = mode;
    r = read_all(o);
    REQUIRE(r.error.empty());
    CHECK(r.all.size == 3);
    CHECK(r.all.dense == want.all.dense);
    CHECK(r.all.cat == want.all.cat);
    CHECK(r.all.labels == std::vector<float>{0, 0, 0});
  }
  // either: the labelled file still reads its labels; a line two fields short is refused.
  o.files = {labelled};
  CHECK(read_all(o).all.labels == want.all.labels);
  const std::string short_line = drop_label(drop_label(line1));
  o.files = {dir.write("s.tsv", short_line + "\n")};
  CHECK(read_all(o).error.find("expected 40 fields, got 38") != std::string::npos);
}

TEST_CASE("labels either: a file's first line decides its layout; a line of the other one is refused") {
  // A file that mixes the two layouts is a damaged file, not two kinds of
  // rows: its lines would be scored from shifted columns.
  temp_dir dir;
  const auto drop_label = [](const std::string& l) { return l.substr(l.find('\t') + 1); };
  auto o = options_for({dir.write("lu.tsv", line1 + "\n" + line2 + "\n" + drop_label(line3) + "\n")});
  o.whole_lines = true;
  o.labels = data::label_presence::either;
  auto r = read_all(o);
  CHECK(r.error.find("lu.tsv:3") != std::string::npos);
  CHECK(r.error.find("expected 40 fields, got 39") != std::string::npos);
  o.files = {dir.write("ul.tsv", drop_label(line1) + "\n" + line2 + "\n")};
  r = read_all(o);
  CHECK(r.error.find("ul.tsv:2") != std::string::npos);
  CHECK(r.error.find("39 fields, got 40") != std::string::npos);
  // Each file decides for itself.
  o.files = {dir.write("a.tsv", line1 + "\n"), dir.write("b.tsv", drop_label(line2) + "\n")};
  r = read_all(o);
  REQUIRE(r.error.empty());
  CHECK(r.all.labels == std::vector<float>{1, 0});
}
