// The checkpoint loader. The first byte picks what the rest is:
//   even: a manifest.json text, parsed with parse_manifest;
//   odd:  the bytes of embedding-0.bin in an otherwise valid checkpoint of
//         a 3 x 10 x 4 model (the manifest lists its true size and CRC32C, so
//         the loader gets past the checksum to the array file's parser).
// Property: every refusal names the file; nothing crashes, hangs or
// allocates without bound (the header's array lengths are checked against
// the file size before anything is read).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "checkpoint/crc32c.hpp"
#include "checkpoint/model_files.hpp"
#include "checkpoint/store.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace fs = std::filesystem;
using namespace checkpoint;

namespace {

const std::string& folder() {
  static const std::string f = [] {
    auto p = fs::temp_directory_path() / ("ss-fuzz-ckpt-" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p.string();
  }();
  return f;
}

void write_bytes(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const std::uint8_t* body = data + 1;
  const std::size_t n = size - 1;
  if (data[0] % 2 == 0) {
    manifest m;
    const std::string text(reinterpret_cast<const char*>(body), n);
    if (auto e = parse_manifest(text, "fuzz/manifest.json", m))
      FUZZ_CHECK(e->find("fuzz/manifest.json") != std::string::npos);
    return 0;
  }
  const auto dir = folder();
  const auto emb = dir + "/embedding-0.bin";
  write_bytes(emb, body, n);
  manifest m;
  m.mode = "sequential";
  m.readers = {reader_position{}};
  m.files = {{"embedding-0.bin", n, crc32c_extend(0, body, n)}};
  {
    std::ofstream f(dir + "/manifest.json", std::ios::trunc);
    f << to_json(m);
  }
  opened_checkpoint c;
  FUZZ_CHECK(!open_checkpoint(dir, c));
  model::embedding_tables t(3, 10, 4, 1);
  if (auto e = load_embeddings(c, t))
    FUZZ_CHECK(e->find(dir) != std::string::npos);
  return 0;
}
