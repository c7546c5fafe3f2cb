// Outputs never destroy inputs, are checked before any work, and replace the
// old file only when complete (issue 40, rows 6 and 18).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "report/output_files.hpp"

namespace fs = std::filesystem;

namespace {

struct scratch {
  fs::path dir;
  scratch() {
    dir = fs::temp_directory_path() / ("ss-output-files-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("an output that is one of the inputs is refused, by inode") {
  scratch s;
  const auto data = s.write("data.tsv", "1\t2\n");
  runtime::input_files in;
  in.add(std::vector<std::string>{data});
  auto e = runtime::check_output_file("use.out", data, in);
  REQUIRE(e);
  CHECK(e->find("option 'use.out'") != std::string::npos);
  CHECK(e->find("one of this run's inputs") != std::string::npos);
  // Another name for the same file: "./", "..", a hard link.
  const auto alias = (s.dir / "." / "data.tsv").string();
  CHECK(runtime::check_output_file("use.out", alias, in));
  fs::create_hard_link(data, s.dir / "link.tsv");
  CHECK(runtime::check_output_file("use.out", (s.dir / "link.tsv").string(), in));
  CHECK_FALSE(runtime::check_output_file("use.out", (s.dir / "other.txt").string(), in));
  CHECK(read(data) == "1\t2\n");
}

TEST_CASE("an output in a folder that does not exist, or a folder, is refused up front") {
  scratch s;
  runtime::input_files none;
  auto e = runtime::check_output_file("output.metrics", "/nonexistent/dir/m.json", none);
  REQUIRE(e);
  CHECK(e->find("option 'output.metrics'") != std::string::npos);
  CHECK(e->find("'/nonexistent/dir' does not exist") != std::string::npos);
  CHECK(runtime::check_output_file("output.metrics", s.dir.string(), none));
  CHECK(runtime::check_output_dir("output.dir", "/proc/version/x", none));
  const auto made = (s.dir / "a" / "b").string();
  CHECK_FALSE(runtime::check_output_dir("checkpoint.dir", made, none));
  CHECK(fs::is_directory(made));
  CHECK(fs::is_empty(made)); // the probe file is gone
  // A folder of inputs (a checkpoint resumed from) cannot be an output dir.
  runtime::input_files ck;
  ck.add(made);
  CHECK(runtime::check_output_dir("output.model", made, ck));
}

TEST_CASE("replacing_file: the old file stays until commit, a failure leaves no temporary") {
  scratch s;
  const auto path = s.write("p.txt", "old\n");
  {
    runtime::replacing_file f;
    std::string err;
    REQUIRE(f.open(path, &err));
    std::fputs("new, half written", f.get());
    std::fflush(f.get());
    CHECK(read(path) == "old\n"); // readers still see the old file
  } // destroyed without commit: abandoned
  CHECK(read(path) == "old\n");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(s.dir))
    files += e.is_regular_file();
  CHECK(files == 1);
  std::string err;
  REQUIRE(runtime::write_replacing(path, "new\n", &err));
  CHECK(read(path) == "new\n");
  // A device is written in place, never replaced by a rename.
  REQUIRE(runtime::write_replacing("/dev/null", "x", &err));
  CHECK(fs::is_character_file("/dev/null"));
}
