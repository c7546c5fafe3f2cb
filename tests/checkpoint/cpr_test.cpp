// CPR's row choice (checkpoint/cpr_policy.hpp) and a shard's chain of saves
// on disk (checkpoint/cpr_files.hpp).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <unistd.h>

#include "checkpoint/cpr_files.hpp"
#include "checkpoint/cpr_policy.hpp"

namespace {

using checkpoint::cpr_policy;
using checkpoint::row_chooser;

struct cpr_dir {
  explicit cpr_dir(const std::string& tag)
      : path((std::filesystem::temp_directory_path() /
              ("ss-" + tag + "-" + std::to_string(::getpid())))
               .string()) {
    std::filesystem::remove_all(path);
  }
  ~cpr_dir() { std::filesystem::remove_all(path); }
  std::string path;
};

// The next save's rows, written without a failure (plan, then saved).
checkpoint::row_choice landed(row_chooser& c) {
  auto s = c.plan_save();
  c.saved(s);
  return s;
}

} // namespace

TEST_CASE("cpr mfu: a partial save writes the most updated rows, then forgets them") {
  row_chooser c(cpr_policy::mfu, 100, 0.03, 0, 0, 1); // 3 rows per partial save
  CHECK(c.tracking_bytes() == 100 * sizeof(std::uint32_t));
  c.touched(5);
  CHECK(landed(c).full); // the first save is the base
  for (int i = 0; i < 9; ++i)
    c.touched(40);
  for (int i = 0; i < 5; ++i)
    c.touched(7);
  for (int i = 0; i < 5; ++i)
    c.touched(3); // ties with 7: the lower row first
  c.touched(90);
  c.touched(91);
  auto s = landed(c);
  REQUIRE(!s.full);
  CHECK(s.rows == std::vector<std::uint64_t>{3, 7, 40});
  // 90 and 91 were not chosen: they keep their counts; the chosen start over.
  c.touched(7);
  s = landed(c);
  CHECK(s.rows == std::vector<std::uint64_t>{7, 90, 91});
  CHECK(c.pending_updates() == 0);
  CHECK(landed(c).rows.empty()); // nothing updated: nothing to write
}

TEST_CASE("cpr: full-every makes every K-th save a full one; policy full always") {
  row_chooser m(cpr_policy::mfu, 10, 0.5, 3, 0, 1);
  std::vector<bool> full;
  for (int i = 0; i < 7; ++i) {
    m.touched(std::uint64_t(i));
    full.push_back(landed(m).full);
  }
  CHECK(full == std::vector<bool>{true, false, false, true, false, false, true});
  row_chooser f(cpr_policy::full, 10, 0.1, 0, 0, 1);
  landed(f);
  CHECK(landed(f).full);
  CHECK(f.tracking_bytes() == 0);
}

TEST_CASE("cpr ssu: a fixed sample ranks hot rows first, with the sample's memory") {
  row_chooser c(cpr_policy::ssu, 1'000'000, 0.00001, 0, 256, 7); // 10 rows per save
  CHECK(c.tracking_bytes() == 256 * sizeof(std::uint64_t)); // not a counter per row
  landed(c);
  // Rows 0..9 take half of 100000 updates; the other half is spread thin.
  for (std::uint64_t i = 0; i < 100'000; ++i)
    c.touched(i % 2 == 0 ? (i / 2) % 10 : 1000 + (i * 7919) % 900'000);
  const auto s = landed(c);
  REQUIRE(s.rows.size() == 10);
  std::size_t hot = 0;
  for (auto r : s.rows)
    hot += r < 10;
  CHECK(hot >= 9);
  // The same seed and updates choose the same rows.
  row_chooser d(cpr_policy::ssu, 1'000'000, 0.00001, 0, 256, 7);
  landed(d);
  for (std::uint64_t i = 0; i < 100'000; ++i)
    d.touched(i % 2 == 0 ? (i / 2) % 10 : 1000 + (i * 7919) % 900'000);
  CHECK(landed(d).rows == s.rows);
}

TEST_CASE("cpr files: a chain of a full and partial saves reloads exactly") {
  cpr_dir dir("cpr-chain");
  const checkpoint::cpr_shape shape{3, 5, 4, 1, 1, 2}; // 15 rows of dim 4, shard 1 of 2
  std::vector<float> w(15 * 4), a(15);
  std::iota(w.begin(), w.end(), 0.0f);
  std::iota(a.begin(), a.end(), 100.0f);
  checkpoint::cpr_save_info info;
  std::string err;
  REQUIRE_MESSAGE(checkpoint::write_cpr_save(dir.path, shape, 0, 10, w.data(), a.data(), nullptr,
                                             &info, &err),
                  err);
  CHECK(info.full);
  auto w1 = w, a1 = a;
  w1[2 * 4] = -1; // row 2 changes, and row 9
  w1[9 * 4 + 3] = -2;
  a1[9] = -3;
  const std::vector<std::uint64_t> rows = {2, 9};
  REQUIRE_MESSAGE(checkpoint::write_cpr_save(dir.path, shape, 1, 20, w1.data(), a1.data(), &rows,
                                             &info, &err),
                  err);
  CHECK(!info.full);
  CHECK(info.rows == 2);
  auto w2 = w1;
  w2[4 * 4] = -4; // row 4 changes after the last save: not in the chain
  std::vector<float> lw(w.size(), 0), la(a.size(), 0);
  checkpoint::cpr_loaded got;
  REQUIRE(!checkpoint::load_cpr_chain(dir.path, shape, lw.data(), la.data(), &got));
  CHECK(lw == w1);
  CHECK(la == a1);
  CHECK(got.saves.size() == 2);
  CHECK(got.newest_at_ns == 20);
  CHECK(got.next_seq == 2);
  // A new full save replaces the chain and removes its files.
  REQUIRE(checkpoint::write_cpr_save(dir.path, shape, 2, 30, w2.data(), a.data(), nullptr, &info,
                                     &err));
  CHECK(!std::filesystem::exists(dir.path + "/00000000.bin"));
  CHECK(!std::filesystem::exists(dir.path + "/00000001.bin"));
  REQUIRE(!checkpoint::load_cpr_chain(dir.path, shape, lw.data(), la.data(), &got));
  CHECK(lw == w2);
  CHECK(got.saves.size() == 1);
}

TEST_CASE("cpr files: no chain is no error; damage and another shard are named") {
  cpr_dir dir("cpr-damage");
  const checkpoint::cpr_shape shape{2, 4, 2, 1, 0, 1};
  std::vector<float> w(16, 1.0f), a(8, 2.0f);
  checkpoint::cpr_loaded got;
  REQUIRE(!checkpoint::load_cpr_chain(dir.path, shape, w.data(), a.data(), &got));
  CHECK(got.saves.empty());
  std::string err;
  const std::vector<std::uint64_t> rows = {1};
  CHECK(!checkpoint::write_cpr_save(dir.path, shape, 0, 0, w.data(), a.data(), &rows, nullptr,
                                    &err));
  CHECK(err.find("needs a full one") != std::string::npos);
  REQUIRE(checkpoint::write_cpr_save(dir.path, shape, 0, 0, w.data(), a.data(), nullptr, nullptr,
                                     &err));
  const std::vector<std::uint64_t> bad = {8};
  CHECK(!checkpoint::write_cpr_save(dir.path, shape, 1, 0, w.data(), a.data(), &bad, nullptr,
                                    &err));
  CHECK(err.find("row 8") != std::string::npos);
  auto other = shape;
  other.shard = 1;
  other.num_shards = 2;
  auto e = checkpoint::load_cpr_chain(dir.path, other, w.data(), a.data(), &got);
  REQUIRE(e);
  CHECK(e->find("chain.json") != std::string::npos);
  CHECK(e->find("expected shard 1 of 2") != std::string::npos);
  // A flipped byte: the CRC names the file.
  const auto file = dir.path + "/00000000.bin";
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  e = checkpoint::load_cpr_chain(dir.path, shape, w.data(), a.data(), &got);
  REQUIRE(e);
  CHECK(e->find("00000000.bin") != std::string::npos);
  CHECK(e->find("CRC32C") != std::string::npos);
  // Truncated.
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 5);
  e = checkpoint::load_cpr_chain(dir.path, shape, w.data(), a.data(), &got);
  REQUIRE(e);
  CHECK(e->find("00000000.bin") != std::string::npos);
}

TEST_CASE("cpr mfu, a save in the background: updates during its write count for the next "
          "save; a failed one gives its counts back") {
  row_chooser c(cpr_policy::mfu, 100, 0.02, 0, 0, 1); // 2 rows per partial save
  c.touched(1);
  CHECK(landed(c).full);
  for (int i = 0; i < 4; ++i)
    c.touched(10);
  for (int i = 0; i < 3; ++i)
    c.touched(20);
  c.touched(30);
  auto t = c.begin_save(c.plan_save());
  REQUIRE(!t.choice.full);
  CHECK(t.choice.rows == std::vector<std::uint64_t>{10, 20});
  CHECK(c.pending_updates() == 0);
  // During the write: row 10 is updated twice more.
  c.touched(10);
  c.touched(10);
  c.landed(t);
  CHECK(c.saves() == 2);
  // Row 10's two new updates outrank row 30's one: the write did not forget them.
  auto t2 = c.begin_save(c.plan_save());
  CHECK(t2.choice.rows == std::vector<std::uint64_t>{10, 30});
  c.touched(20);
  c.failed(t2); // 10 (2) and 30 (1) come back beside 20's new update (1)
  CHECK(c.saves() == 2);
  CHECK(c.pending_updates() == 3); // the 2 updates during the first write, and the new one
  CHECK(c.plan_save().rows == std::vector<std::uint64_t>{10, 20});
}

TEST_CASE("cpr files: rows gathered before and written later make the same file and chain") {
  cpr_dir inline_dir("cpr-inline"), later_dir("cpr-later");
  const checkpoint::cpr_shape shape{2, 4, 3, 1, 0, 1}; // 8 rows of dim 3
  std::vector<float> w(8 * 3), a(8);
  std::iota(w.begin(), w.end(), 1.0f);
  std::iota(a.begin(), a.end(), 50.0f);
  const std::vector<std::uint64_t> rows = {1, 6};
  std::string err;
  for (const auto* r : {static_cast<const std::vector<std::uint64_t>*>(nullptr), &rows}) {
    const std::uint64_t seq = r ? 1 : 0;
    checkpoint::cpr_save_info a_info, b_info;
    REQUIRE_MESSAGE(checkpoint::write_cpr_save(inline_dir.path, shape, seq, 5, w.data(), a.data(),
                                               r, &a_info, &err),
                    err);
    checkpoint::cpr_rows g;
    REQUIRE(!checkpoint::gather_cpr_rows(shape, w.data(), a.data(), r, &g));
    w[0] += 100; // the shard goes on after the gather: the save keeps the rows as gathered
    a[6] += 100;
    REQUIRE_MESSAGE(
      checkpoint::write_cpr_rows(later_dir.path, shape, seq, 5, g, &b_info, &err), err);
    CHECK(a_info.crc32c == b_info.crc32c);
    CHECK(a_info.bytes == b_info.bytes);
    w[0] -= 100;
    a[6] -= 100;
  }
  std::vector<float> lw(w.size()), la(a.size());
  checkpoint::cpr_loaded got;
  REQUIRE(!checkpoint::load_cpr_chain(later_dir.path, shape, lw.data(), la.data(), &got));
  CHECK(lw == w);
  CHECK(la == a);
  CHECK(got.saves.size() == 2);
  // A row out of the shape is refused before anything is copied.
  checkpoint::cpr_rows g;
  const std::vector<std::uint64_t> bad = {8};
  auto e = checkpoint::gather_cpr_rows(shape, w.data(), a.data(), &bad, &g);
  REQUIRE(e);
  CHECK(e->find("row 8 of 8") != std::string::npos);
}
