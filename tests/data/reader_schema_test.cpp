// Schema option: other delimited layouts, columns by index or header name,
// and schema errors that name the file.
#include <cmath>
#include <doctest/doctest.h>

#include "data/hashing.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

namespace {

const std::string csv_text = "click,age,price,site,device\n"
                             "1,25,9.99,news.com,mobile\n"
                             "0,,3,shop.com,\n"
                             "1,40,-1,,desktop\n";

data::schema_options csv_by_name() {
  data::schema_options s;
  s.delimiter = ',';
  s.header = true;
  s.label = "click";
  s.dense = {"age", "price"};
  s.categorical = {"site", "device"};
  return s;
}

// The three examples of csv_text, whatever way the schema names them.
void check_csv_examples(const read_result& r) {
  REQUIRE(r.open_error.empty());
  REQUIRE(r.all.size == 3);
  CHECK(r.stats.malformed == 0);
  CHECK(r.all.num_dense == 2);
  CHECK(r.all.num_cat == 2);
  CHECK(r.all.labels == std::vector<float>{1, 0, 1});
  CHECK(r.all.dense[0] == doctest::Approx(3.2580965));                // log1p(25)
  CHECK(r.all.dense[1] == static_cast<float>(std::log1p(9.99)));      // price 9.99: 2.3970
  CHECK(r.all.dense[2] == 0.0f);                                      // age missing
  CHECK(r.all.dense[3] == doctest::Approx(1.3862944));                // log1p(3)
  CHECK(r.all.dense[5] == 0.0f);                                      // price -1 clamps to 0
  CHECK(r.all.cat[0] == data::hash_categorical("news.com", 0));       // site is categorical 0
  CHECK(r.all.cat[1] == data::hash_categorical("mobile", 1));         // device is categorical 1
  CHECK(r.all.cat[3] == data::hash_categorical("", 1));               // device missing
  CHECK(r.all.cat[4] == data::hash_categorical("", 0));               // site missing
}

} // namespace

TEST_CASE("CSV with a header: columns by name") {
  temp_dir dir;
  auto o = options_for({dir.write("ads.csv", csv_text)});
  o.schema = csv_by_name();
  const auto r = read_all(o);
  check_csv_examples(r);
  CHECK(r.stats.lines == 3); // the header is not a data line
}

TEST_CASE("CSV: columns by index, with and without a header line") {
  temp_dir dir;
  data::schema_options s;
  s.delimiter = ',';
  s.header = true;
  s.label = 0;
  s.dense = {1, 2};
  s.categorical = {3, 4};
  auto o = options_for({dir.write("ads.csv", csv_text)});
  o.schema = s;
  check_csv_examples(read_all(o));

  s.header = false; // the same data without its header line
  o.files = {dir.write("noheader.csv", csv_text.substr(csv_text.find('\n') + 1))};
  o.schema = s;
  check_csv_examples(read_all(o));

  // Config values: "3" is an index, "site" a name.
  CHECK(data::column_ref::parse("3").index == 3);
  CHECK(data::column_ref::parse("site").by_name());
  CHECK(data::column_ref::parse("site").name == "site");
}

TEST_CASE("CSV: label anywhere, unused columns ignored, CRLF header with BOM") {
  temp_dir dir;
  data::schema_options s;
  s.delimiter = ',';
  s.header = true;
  s.label = "click";
  s.dense = {"age"};
  const std::string text = "\xEF\xBB\xBFid, age ,click\r\nrow-1,7,1\r\nrow-2,x,0\r\n";
  auto o = options_for({dir.write("bom.csv", text)});
  o.schema = s;
  const auto r = read_all(o);
  REQUIRE(r.open_error.empty());
  CHECK(r.all.num_cat == 0);
  REQUIRE(r.all.labels == std::vector<float>{1});
  CHECK(r.all.dense[0] == doctest::Approx(2.0794415)); // log1p(7)
  // Line 3 (the header is line 1) has a non-number age, named from the header.
  REQUIRE(r.stats.first_errors.size() == 1);
  CHECK(r.stats.first_errors[0] == dir.path("bom.csv") + ":3: column age: expected a number, got 'x'");
}

TEST_CASE("CSV: too many fields against the header width; per-file headers") {
  temp_dir dir;
  auto o = options_for({dir.write("a.csv", csv_text + "1,2,3,a,b,extra\n"),
                        // Same columns in another order: names resolve per file.
                        dir.write("b.csv", "device,site,price,age,click\nphone,web.com,0,1,0\n")});
  o.schema = csv_by_name();
  const auto r = read_all(o);
  REQUIRE(r.open_error.empty());
  CHECK(r.all.size == 4);
  REQUIRE(r.stats.first_errors.size() == 1);
  CHECK(r.stats.first_errors[0] == o.files[0] + ":5: expected at most 5 fields, got 6");
  CHECK(r.all.labels[3] == 0.0f);
  CHECK(r.all.dense[6] == doctest::Approx(0.6931472)); // age 1 in b.csv: log1p(1)
  CHECK(r.all.cat[6] == data::hash_categorical("web.com", 0));
  CHECK(r.all.cat[7] == data::hash_categorical("phone", 1));

  // Parts skip the headers and still cover every data line once.
  std::size_t total = 0;
  for (std::size_t part = 0; part < 3; ++part) {
    o.part = part;
    o.num_parts = 3;
    total += read_all(o).all.size;
  }
  CHECK(total == 4);
}

TEST_CASE("criteo schema: columns may be named I1.., C1..") {
  temp_dir dir;
  auto s = data::schema_options::criteo();
  s.dense = {"I2"};
  s.categorical = {"C26"};
  auto o = options_for({dir.write("c.tsv", criteo_line("1", {"4", "5"}, {"", "", "", "", "", "", "", "", "", "",
                                                                        "", "", "", "", "", "", "", "", "", "",
                                                                        "", "", "", "", "", "z"}) +
                                                "\n")});
  o.schema = s;
  const auto r = read_all(o);
  REQUIRE(r.all.size == 1);
  CHECK(r.all.dense == std::vector<float>{static_cast<float>(std::log1p(5.0))}); // I2 = 5
  CHECK(r.all.cat == std::vector<std::uint64_t>{data::hash_categorical("z", 0)});
}

TEST_CASE("schema errors name the file and the column") {
  temp_dir dir;
  const std::string path = dir.write("ads.csv", csv_text);
  auto open_error = [&](const data::schema_options& s, const std::string& file) {
    auto o = options_for({file});
    o.schema = s;
    std::string error;
    CHECK(data::reader::open(o, &error) == nullptr);
    return error;
  };

  auto s = csv_by_name();
  s.label = "clik";
  CHECK(open_error(s, path) ==
        path + ": schema: label column 'clik' is not in the header (click, age, price, site, device)");

  s = csv_by_name();
  s.dense = {"age", 7};
  CHECK(open_error(s, path) ==
        path + ": schema: dense column 7 is out of range: lines have at most 5 columns (0-based indices 0..4)");

  s = csv_by_name();
  s.categorical = {"site", "age"};
  CHECK(open_error(s, path) == path + ": schema: categorical column 'age' (index 1) is already used as another "
                                      "label, dense or categorical column");

  s = csv_by_name();
  const std::string empty = dir.write("empty.csv", "");
  CHECK(open_error(s, empty) == empty + ": expected a header line naming the columns, but the file is empty");

  s = csv_by_name();
  s.header = false;
  CHECK(open_error(s, path) == path + ": schema: label column 'click' is given by name, but the schema has no "
                                      "header line (set header, or give the column by 0-based index)");

  s = data::schema_options::criteo();
  s.label = "";
  CHECK(open_error(s, path) == path + ": schema: label column is not set");
}

TEST_CASE("schema: column counts and indices beyond data::max_columns are refused before any allocation") {
  // Issue 40 row 7: a categorical index of 4e8 grew the schema to 6 GB, and
  // num_columns 1e12 ended in bad_alloc. 65536 columns is the most a line has.
  data::schema_options s;
  s.delimiter = ',';
  s.label = 0;
  s.dense = {1};
  s.categorical = {400000000};
  data::resolved_schema r;
  std::string error;
  CHECK_FALSE(data::resolve_schema(s, nullptr, "big.csv", &r, &error));
  CHECK(error == "big.csv: schema: categorical column 400000000 is out of range: lines have at most "
                 "65536 columns (0-based indices 0..65535)");
  s.categorical = {2};
  s.num_columns = 1'000'000'000'000ull;
  CHECK_FALSE(data::resolve_schema(s, nullptr, "big.csv", &r, &error));
  CHECK(error == "big.csv: schema: num_columns 1000000000000 is more than the 65536 columns a line may have");
  // A header of more fields than that (one line of 65537 commas' worth).
  s.num_columns = 0;
  s.header = true;
  s.label = "f0";
  s.dense = {"f1"};
  s.categorical = {"f2"};
  std::vector<std::string> header(65537);
  for (std::size_t i = 0; i < header.size(); ++i)
    header[i] = "f" + std::to_string(i);
  CHECK_FALSE(data::resolve_schema(s, &header, "wide.csv", &r, &error));
  CHECK(error == "wide.csv: schema: the header has 65537 columns, more than the 65536 a line may have");
  header.resize(65536);
  CHECK(data::resolve_schema(s, &header, "wide.csv", &r, &error));
  CHECK(r.num_columns == 65536);
}
