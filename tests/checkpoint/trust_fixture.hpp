#pragma once
// A temporary folder per test case (removed at the end), for the trust
// (issue 40) storage tests.
#include <filesystem>
#include <string>

#include <unistd.h>

namespace trust_test {

namespace fs = std::filesystem;

struct trust_dir {
  fs::path p;
  explicit trust_dir(const char* name)
      : p(fs::temp_directory_path() / (std::string("ss-trust-") + name + "-" +
                                       std::to_string(::getpid()))) {
    fs::remove_all(p);
    fs::create_directories(p);
  }
  ~trust_dir() { fs::remove_all(p); }
  std::string str() const { return p.string(); }
};

} // namespace trust_test
