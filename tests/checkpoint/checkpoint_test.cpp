// The checkpoint format: CRC32C, array files, manifests, atomic folders, and
// every kind of damage refused with the file named.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "checkpoint/background_writer.hpp"
#include "checkpoint/crc32c.hpp"
#include "checkpoint/model_files.hpp"
#include "checkpoint/store.hpp"

namespace fs = std::filesystem;
using namespace checkpoint;

namespace {

struct temp_dir {
  fs::path p;
  explicit temp_dir(const char* name)
      : p(fs::temp_directory_path() / (std::string("ss-ckpt-") + name + "-" +
                                       std::to_string(::getpid()))) {
    fs::remove_all(p);
    fs::create_directories(p);
  }
  ~temp_dir() { fs::remove_all(p); }
  std::string str() const { return p.string(); }
};

// Tables of 3 x 10 rows, dim 4, one optimiser value per row, filled with
// values that name their position.
model::embedding_tables sample_tables() {
  model::embedding_tables t(3, 10, 4, 1);
  for (std::size_t i = 0; i < t.weights().size(); ++i)
    t.weights()[i] = float(i) * 0.5f - 7.0f;
  for (std::size_t tb = 0; tb < 3; ++tb)
    for (std::uint64_t r = 0; r < 10; ++r)
      *t.accumulator(model::row_key(tb, r)) = float(tb * 100 + r);
  return t;
}

// A checkpoint of sample_tables() (as `shards` shard files) and a replica.
std::string write_sample(const std::string& dir, std::uint64_t shards, std::uint64_t examples,
                         std::size_t keep = 3) {
  auto t = sample_tables();
  folder_writer w;
  std::string err, folder;
  REQUIRE(w.begin(dir, checkpoint_name(examples), &err));
  const std::uint64_t local = (10 + shards - 1) / shards;
  std::vector<std::vector<float>> wts(shards), st(shards);
  for (std::uint64_t s = 0; s < shards; ++s) {
    wts[s].assign(3 * local * 4, 0.0f);
    st[s].assign(3 * local, 0.0f);
    for (std::size_t tb = 0; tb < 3; ++tb)
      for (std::uint64_t l = 0; l < local; ++l) {
        const auto row = l * shards + s;
        if (row >= 10)
          continue;
        const auto key = model::row_key(tb, row);
        std::copy(t.row(key), t.row(key) + 4, wts[s].data() + (tb * local + l) * 4);
        st[s][tb * local + l] = *t.accumulator(key);
      }
    embedding_shard_view v{wts[s].data(), st[s].data(), 3, 10, 4, 1, s, shards, local};
    REQUIRE(write_embedding_shard(w, v, &err));
  }
  std::vector<float> params{1, 2, 3, 4, 5}, state{0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
  REQUIRE(write_replica(w, 0, params.data(), state.data(), params.size(), &err));
  manifest m;
  m.config_ini = "[model]\narch = \"small\"\n";
  m.mode = "sequential";
  m.examples = examples;
  m.readers = {{0, 1, 2, 1234, 1240, 6, 0, 3}};
  m.counters = {123.456789012345678, 7.25, 42, 9, 1.5, 11};
  REQUIRE(w.commit(m, keep, &folder, &err));
  return folder;
}

std::string load_error(const std::string& path) {
  opened_checkpoint c;
  if (auto e = open_checkpoint(path, c))
    return *e;
  model::embedding_tables t(3, 10, 4, 1);
  if (auto e = load_embeddings(c, t))
    return *e;
  std::vector<replica_state> reps;
  if (auto e = load_replicas(c, 5, reps))
    return *e;
  return "";
}

void flip_byte(const std::string& path, std::uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(std::streamoff(offset));
  char c = 0;
  f.read(&c, 1);
  c = char(c ^ 0x10);
  f.seekp(std::streamoff(offset));
  f.write(&c, 1);
}

} // namespace

TEST_CASE("crc32c: the standard check value and chaining") {
  CHECK(crc32c_extend(0, "123456789", 9) == 0xE3069283u);
  CHECK(crc32c_extend(crc32c_extend(0, "1234", 4), "56789", 5) == 0xE3069283u);
  CHECK(crc32c_extend(0, "", 0) == 0u);
}

TEST_CASE("checkpoint: round trip of every file kind and the manifest") {
  temp_dir d("roundtrip");
  const auto folder = write_sample(d.str(), 1, 1000);
  opened_checkpoint c;
  REQUIRE_FALSE(open_checkpoint(d.str(), c)); // the dir: LATEST names the folder
  CHECK(c.folder == folder);
  CHECK(c.m.examples == 1000);
  CHECK(c.m.config_ini == "[model]\narch = \"small\"\n");
  REQUIRE(c.m.readers.size() == 1);
  CHECK(c.m.readers[0].epoch == 2);
  CHECK(c.m.readers[0].examples == 1234);
  CHECK(c.m.readers[0].lines == 1240);
  CHECK(c.m.readers[0].malformed == 6);
  CHECK(c.m.readers[0].cut_bags == 3);
  CHECK(c.m.counters.cut_bags == 11);
  CHECK(c.m.counters.loss_sum == 123.456789012345678); // doubles exactly
  CHECK(c.m.counters.positives == 42);
  CHECK(c.m.files.size() == 2); // embedding-0.bin, replica-0.bin
  model::embedding_tables t(3, 10, 4, 1);
  REQUIRE_FALSE(load_embeddings(c, t));
  const auto want = sample_tables();
  CHECK(t.weights() == want.weights());
  CHECK(t.accumulators() == want.accumulators());
  std::vector<replica_state> reps;
  REQUIRE_FALSE(load_replicas(c, 5, reps));
  REQUIRE(reps.size() == 1);
  CHECK(reps[0].params == std::vector<float>{1, 2, 3, 4, 5});
  CHECK(reps[0].state[4] == 0.5f);
}

TEST_CASE("checkpoint: rows re-split from any number of shard files") {
  for (std::uint64_t shards : {2, 3, 4}) {
    temp_dir d("resplit");
    write_sample(d.str(), shards, 10);
    opened_checkpoint c;
    REQUIRE_FALSE(open_checkpoint(d.str(), c));
    model::embedding_tables t(3, 10, 4, 1);
    REQUIRE_FALSE(load_embeddings(c, t));
    CHECK(t.weights() == sample_tables().weights());
    CHECK(t.accumulators() == sample_tables().accumulators());
  }
}

TEST_CASE("checkpoint: LATEST names the newest, keep prunes the oldest, temporaries are ignored") {
  temp_dir d("keep");
  write_sample(d.str(), 1, 100, 2);
  write_sample(d.str(), 1, 200, 2);
  // A torn write of a dead run (no process has pid 999999999).
  fs::create_directory(d.p / ".tmp-ckpt-000000000300-999999999");
  std::ofstream(d.p / ".tmp-ckpt-000000000300-999999999" / "embedding-0.bin") << "partial";
  opened_checkpoint c;
  REQUIRE_FALSE(open_checkpoint(d.str(), c));
  CHECK(c.m.examples == 200);
  write_sample(d.str(), 1, 300, 2);
  CHECK_FALSE(fs::exists(d.p / "ckpt-000000000100"));
  CHECK(fs::exists(d.p / "ckpt-000000000200"));
  CHECK(fs::exists(d.p / "ckpt-000000000300"));
  CHECK_FALSE(fs::exists(d.p / ".tmp-ckpt-000000000300-999999999"));
  REQUIRE_FALSE(open_checkpoint(d.str(), c));
  CHECK(c.m.examples == 300);
}

TEST_CASE("checkpoint: every kind of damage is refused, naming the file") {
  temp_dir d("damage");
  const auto folder = write_sample(d.str(), 2, 100);
  const auto emb = folder + "/embedding-1.bin";
  const auto backup = d.str() + "/backup";
  fs::copy(folder, backup, fs::copy_options::recursive);
  auto restore = [&] {
    fs::remove_all(folder);
    fs::copy(backup, folder, fs::copy_options::recursive);
  };
  REQUIRE(load_error(folder) == "");

  SUBCASE("a flipped bit in the rows: checksum mismatch") {
    flip_byte(emb, fs::file_size(emb) - 5);
    const auto e = load_error(folder);
    CHECK(e.find(emb) != std::string::npos);
    CHECK(e.find("checksum mismatch") != std::string::npos);
  }
  SUBCASE("truncated") {
    fs::resize_file(emb, fs::file_size(emb) - 8);
    const auto e = load_error(folder);
    CHECK(e.find(emb) != std::string::npos);
    CHECK(e.find("truncated") != std::string::npos);
  }
  SUBCASE("missing file") {
    fs::remove(emb);
    const auto e = load_error(folder);
    CHECK(e.find(emb) != std::string::npos);
    CHECK(e.find("missing") != std::string::npos);
  }
  SUBCASE("extra file") {
    std::ofstream(folder + "/notes.txt") << "x";
    const auto e = load_error(folder);
    CHECK(e.find("notes.txt") != std::string::npos);
    CHECK(e.find("extra file") != std::string::npos);
  }
  SUBCASE("wrong format version") {
    std::ifstream in(folder + "/manifest.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find("\"version\": 1");
    REQUIRE(at != std::string::npos);
    text.replace(at, 12, "\"version\": 7");
    std::ofstream(folder + "/manifest.json") << text;
    const auto e = load_error(folder);
    CHECK(e.find("manifest.json") != std::string::npos);
    CHECK(e.find("version 7") != std::string::npos);
  }
  // nlohmann's get<std::uint64_t>() casts any number: 4.4e83 was undefined
  // behaviour (a libFuzzer find), -3 became 2^64 - 3.
  auto edit_manifest = [&](const std::string& from, const std::string& to) {
    std::ifstream in(folder + "/manifest.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    std::ofstream(folder + "/manifest.json") << text;
    return load_error(folder);
  };
  SUBCASE("a count that is a huge double") {
    const auto e = edit_manifest("\"examples\": 100", "\"examples\": 4.44444e+83");
    CHECK(e.find("manifest.json") != std::string::npos);
    CHECK(e.find("field 'examples': expected an integer from 0 to 2^64-1, got 4.44444e+83") !=
          std::string::npos);
  }
  SUBCASE("a negative count") {
    const auto e = edit_manifest("\"examples\": 100", "\"examples\": -3");
    CHECK(e.find("field 'examples'") != std::string::npos);
  }
  SUBCASE("a checksum past 32 bits") {
    const auto e = edit_manifest("\"crc32c\": ", "\"crc32c\": 4294967296, \"was\": ");
    CHECK(e.find("field 'crc32c'") != std::string::npos);
  }
  SUBCASE("a string where a number belongs") {
    const auto e = edit_manifest("\"version\": 1", "\"version\": \"1\"");
    CHECK(e.find("field 'version': expected an integer, got \"1\"") != std::string::npos);
  }
  SUBCASE("malformed manifest") {
    std::ofstream(folder + "/manifest.json") << "{\"format\": \"shadowsync-checkpoint\", ";
    const auto e = load_error(folder);
    CHECK(e.find("manifest.json") != std::string::npos);
  }
  SUBCASE("bad magic, same size and listed CRC") {
    flip_byte(emb, 0);
    const auto e = load_error(folder);
    CHECK(e.find(emb) != std::string::npos);
    CHECK(e.find("bad magic") != std::string::npos);
  }
  SUBCASE("a shard file of another model shape") {
    opened_checkpoint c;
    REQUIRE_FALSE(open_checkpoint(folder, c));
    model::embedding_tables t(3, 12, 4, 1);
    const auto e = load_embeddings(c, t);
    REQUIRE(e);
    CHECK(e->find("rows per table 10, the model has 12") != std::string::npos);
  }
  SUBCASE("LATEST naming a folder that is gone") {
    fs::remove_all(folder);
    const auto e = load_error(d.str());
    CHECK(e.find("LATEST") != std::string::npos);
  }
  restore();
  CHECK(load_error(folder) == "");
}

TEST_CASE("background writer: the file holds the tables as they were at the cut") {
  // 4 tables x 100000 rows (391 chunks of 1024), dim 4, 1 state float. The
  // training side changes rows while the writer runs: every update is
  // announced with before_update first, as the sequential engine does.
  const std::uint64_t tables = 4, rows = 100000;
  model::embedding_tables t(tables, rows, 4, 1);
  for (std::size_t i = 0; i < t.weights().size(); ++i)
    t.weights()[i] = float(i % 1000) * 0.25f;
  for (std::uint64_t tb = 0; tb < tables; ++tb)
    for (std::uint64_t r = 0; r < rows; ++r)
      *t.accumulator(model::row_key(tb, r)) = float(tb * rows + r);
  const auto at_cut = t; // what the checkpoint must hold
  temp_dir d("background");
  background_writer::job j;
  j.dir = d.str();
  j.manifest.mode = "sequential";
  j.manifest.examples = 77;
  j.manifest.readers = {reader_position{}};
  j.params = {1, 2, 3};
  j.state = {4, 5, 6};
  std::string report;
  j.on_committed = [&](const std::string& line) { report = line; };
  background_writer w(std::move(j), t);
  // Change rows spread over every chunk, many times, until the writer is done
  // (and at least 200 rounds, so some changes surely race the writer).
  std::uint64_t round = 0;
  std::vector<std::uint64_t> keys;
  while (round < 200 || !w.done()) {
    keys.clear();
    for (std::uint64_t k = 0; k < 64; ++k)
      keys.push_back(model::row_key((round + k) % tables, (round * 97 + k * 331) % rows));
    w.before_update(keys);
    for (auto key : keys) {
      for (int i = 0; i < 4; ++i)
        t.row(key)[i] += 1.0f;
      *t.accumulator(key) += 1.0f;
    }
    ++round;
  }
  REQUIRE_FALSE(w.finish());
  CHECK(report.find("checkpoint " + d.str() + "/ckpt-000000000077: 77 examples") == 0);
  opened_checkpoint c;
  REQUIRE_FALSE(open_checkpoint(d.str(), c));
  model::embedding_tables back(tables, rows, 4, 1);
  REQUIRE_FALSE(load_embeddings(c, back));
  CHECK(back.weights() == at_cut.weights());
  CHECK(back.accumulators() == at_cut.accumulators());
  CHECK(t.weights() != at_cut.weights()); // the live tables did move on
  std::vector<replica_state> reps;
  REQUIRE_FALSE(load_replicas(c, 3, reps));
  CHECK(reps[0].params == std::vector<float>{1, 2, 3});
}

TEST_CASE("checkpoint: a manifest without the cut bags' counts (an older build's) reads them as 0") {
  manifest m;
  m.mode = "sequential";
  m.readers = {{0, 1, 1, 10, 10, 2, 10, 4}};
  m.counters.cut_bags = 9;
  std::string text = to_json(m);
  manifest back;
  REQUIRE_FALSE(parse_manifest(text, "new.json", back));
  CHECK(back.readers[0].cut_bags == 4);
  CHECK(back.counters.cut_bags == 9);
  for (std::size_t at; (at = text.find("\"cut_bags\"")) != std::string::npos;) {
    const auto end = text.find_first_of(",\n}", text.find(':', at));
    text.erase(at, end - at + (text[end] == ',' ? 1 : 0));
  }
  REQUIRE(text.find("cut_bags") == std::string::npos);
  REQUIRE_FALSE(parse_manifest(text, "old.json", back));
  CHECK(back.readers[0].cut_bags == 0);
  CHECK(back.counters.cut_bags == 0);
  CHECK(back.readers[0].malformed == 2);
}
