// Trust (issue 40) row 11: a CPR save that fails (a full disk, through the
// write seam of file_io.hpp, or a chain that cannot be committed) leaves no
// file behind, and the row choice keeps its rows marked until a save lands.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <cerrno>

#include "checkpoint/cpr_files.hpp"
#include "checkpoint/cpr_policy.hpp"
#include "checkpoint/file_io.hpp"

#include "tests/checkpoint/trust_fixture.hpp"

namespace fs = std::filesystem;
using namespace checkpoint;
using trust_test::trust_dir;

TEST_CASE("trust row 11: a failed CPR save leaves no file and loses no rows") {
  trust_dir d("row11");
  const cpr_shape shape{2, 4, 2, 1, 0, 1};
  std::vector<float> w(16, 1.0f), a(8, 2.0f);
  std::string err;
  REQUIRE(write_cpr_save(d.str(), shape, 0, 0, w.data(), a.data(), nullptr, nullptr, &err));
  // The chain cannot be committed (its temporary name is taken by a folder):
  // the save fails after its file was written.
  fs::create_directories(d.str() + "/chain.json.tmp");
  const std::vector<std::uint64_t> rows = {1, 5};
  CHECK(!write_cpr_save(d.str(), shape, 1, 0, w.data(), a.data(), &rows, nullptr, &err));
  CHECK(err.find("chain.json") != std::string::npos);
  CHECK(!fs::exists(d.str() + "/00000001.bin")); // no partial file
  fs::remove_all(d.str() + "/chain.json.tmp");
  cpr_loaded got;
  REQUIRE(!load_cpr_chain(d.str(), shape, w.data(), a.data(), &got));
  CHECK(got.saves.size() == 1);
  // A full disk (the write seam): ENOSPC after 100 bytes of the save.
  const write_fault full_disk{"00000001.bin", 100, ENOSPC};
  set_write_fault(&full_disk);
  const bool ok = write_cpr_save(d.str(), shape, 1, 0, w.data(), a.data(), &rows, nullptr, &err);
  set_write_fault(nullptr);
  CHECK(!ok);
  CHECK(err.find("00000001.bin': No space left on device") != std::string::npos);
  CHECK(!fs::exists(d.str() + "/00000001.bin"));
  REQUIRE(!load_cpr_chain(d.str(), shape, w.data(), a.data(), &got));
  CHECK(got.saves.size() == 1);
  // The retry lands.
  REQUIRE(write_cpr_save(d.str(), shape, 1, 0, w.data(), a.data(), &rows, nullptr, &err));
  REQUIRE(!load_cpr_chain(d.str(), shape, w.data(), a.data(), &got));
  CHECK(got.saves.size() == 2);

  // The row choice: rows stay marked until their save has landed.
  row_chooser c(cpr_policy::mfu, 100, 0.03, 0, 0, 1); // 3 rows per partial save
  auto base = c.plan_save();
  CHECK(base.full);
  base = c.plan_save(); // the base save failed: the next is the base again
  CHECK(base.full);
  c.saved(base);
  for (int i = 0; i < 5; ++i)
    c.touched(7);
  c.touched(40);
  const auto s = c.plan_save(); // its write fails (ENOSPC, say): not saved
  CHECK(s.rows == std::vector<std::uint64_t>{7, 40});
  CHECK(c.pending_updates() == 6); // so the shard tries again at its next tick
  c.touched(3);
  const auto again = c.plan_save();
  CHECK(again.rows == std::vector<std::uint64_t>{3, 7, 40});
  c.saved(again);
  CHECK(c.pending_updates() == 0);
  CHECK(c.plan_save().rows.empty());
}
