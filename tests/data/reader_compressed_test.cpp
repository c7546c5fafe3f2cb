// gzip and zstd input (data/byte_stream.hpp): the same examples as the plain
// file, the same parts, and clear errors for data cut short or corrupt. The
// compressed files are written here with zlib and libzstd.
#include <doctest/doctest.h>

#include <zlib.h>
#include <zstd.h>

#include <filesystem>

#include "data/byte_stream.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

namespace {

// One gzip member holding `text`.
std::string gzip_bytes(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK); // 16: gzip wrapper
  std::string out(deflateBound(&z, uLong(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = uInt(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// One zstd frame with a checksum, as the zstd command writes it.
std::string zstd_bytes(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), text.data(), text.size());
  ZSTD_freeCCtx(c);
  REQUIRE(!ZSTD_isError(n));
  out.resize(n);
  return out;
}

// 200 Criteo lines with varied fields (labels alternate, I1 = i, C1 = hex i).
std::string criteo_text(std::size_t lines = 200) {
  std::string text;
  for (std::size_t i = 0; i < lines; ++i) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08zx", i * 2654435761u % 4294967291u);
    text += criteo_line(i % 3 == 0 ? "1" : "0", {std::to_string(i), "", std::to_string(i % 7)},
                        {hex, "", "68fd1e64"}) + "\n";
  }
  return text;
}

void check_same(const read_result& a, const read_result& b) {
  INFO(a.open_error, b.open_error, a.error, b.error);
  REQUIRE(a.open_error.empty());
  REQUIRE(b.open_error.empty());
  CHECK(a.error.empty());
  CHECK(b.error.empty());
  REQUIRE(a.all.size == b.all.size);
  CHECK(a.all.labels == b.all.labels);
  CHECK(a.all.dense == b.all.dense);
  CHECK(a.all.cat == b.all.cat);
  CHECK(a.stats.malformed == b.stats.malformed);
  CHECK(a.stats.bytes == b.stats.bytes); // decompressed bytes
}

} // namespace

TEST_CASE("gzip and zstd files read as the plain file, recognised by their bytes, not their names") {
  temp_dir dir;
  const std::string text = criteo_text();
  const auto plain = read_all(options_for({dir.write("plain.tsv", text)}), 7);
  REQUIRE(plain.all.size == 200);
  CHECK(plain.stats.malformed == 0);
  // Names that do not say: the first bytes do (1f 8b, 28 b5 2f fd).
  const std::string gz = dir.write("gz-data.tsv", gzip_bytes(text));
  const std::string zst = dir.write("zst-data.tsv", zstd_bytes(text));
  CHECK(data::sniff_compression(gz) == data::compression::gzip);
  CHECK(data::sniff_compression(zst) == data::compression::zstd);
  check_same(plain, read_all(options_for({gz}), 7));
  check_same(plain, read_all(options_for({zst}), 7));
  // Before compressed input was read, every line of the .gz was malformed.
  CHECK(read_all(options_for({gz}), 7).stats.malformed == 0);

  // Concatenated members / frames (`cat a.gz b.gz`, pigz, zstd -T) are one
  // stream; a tiny read buffer makes lines straddle decoder outputs.
  const std::string half1 = text.substr(0, text.size() / 3 + 17), half2 = text.substr(half1.size());
  auto o = options_for({dir.write("two.gz", gzip_bytes(half1) + gzip_bytes(half2)),
                        dir.write("two.zst", zstd_bytes(half1) + zstd_bytes(half2))});
  o.chunk_bytes = 64;
  const auto both = read_all(o, 5);
  REQUIRE(both.error.empty());
  CHECK(both.all.size == 400);
  CHECK(std::vector<float>(both.all.labels.begin(), both.all.labels.begin() + 200) == plain.all.labels);
  CHECK(std::vector<float>(both.all.labels.begin() + 200, both.all.labels.end()) == plain.all.labels);
}

TEST_CASE("a compressed file splits into the parts of the same file uncompressed") {
  temp_dir dir;
  const std::string text = criteo_text(301);
  const std::string plain = dir.write("p.tsv", text), gz = dir.write("p.gz", gzip_bytes(text)),
                    zst = dir.write("p.zst", zstd_bytes(text));
  std::size_t total = 0;
  for (std::size_t part = 0; part < 3; ++part) {
    auto o = options_for({plain});
    o.part = part;
    o.num_parts = 3;
    const auto want = read_all(o, 16);
    CHECK(want.all.size > 80); // about 100 each
    total += want.all.size;
    for (const auto& f : {gz, zst}) {
      o.files = {f};
      check_same(want, read_all(o, 16));
    }
  }
  CHECK(total == 301);
}

TEST_CASE("compressed sizes measured once serve every reader of the files (one per trainer)") {
  temp_dir dir;
  const std::string text = criteo_text(301);
  const std::string plain = dir.write("p.tsv", text), gz = dir.write("p.gz", gzip_bytes(text)),
                    zst = dir.write("p.zst", zstd_bytes(text)),
                    cut = dir.write("cut.gz", gzip_bytes(text).substr(0, 200));
  // The pattern expands to p.gz, p.tsv, p.zst; plain and damaged files are
  // left out (their readers report the damage).
  const auto sizes = data::measure_compressed_inputs({dir.path("p.*"), cut});
  CHECK(sizes == data::input_sizes{{gz, text.size()}, {zst, text.size()}});
  const auto known = std::make_shared<const data::input_sizes>(sizes);
  for (std::size_t part = 0; part < 3; ++part) {
    auto o = options_for({plain});
    o.part = part;
    o.num_parts = 3;
    const auto want = read_all(o, 16);
    o.known_sizes = known;
    for (const auto& f : {gz, zst}) {
      o.files = {f};
      check_same(want, read_all(o, 16));
    }
  }
  // The known size is what the parts come from: a size of a third of the
  // file gives three parts that together end a third of the way in (a
  // reader measuring the file again would cover all 301 lines).
  std::size_t total = 0;
  for (std::size_t part = 0; part < 3; ++part) {
    auto o = options_for({gz});
    o.part = part;
    o.num_parts = 3;
    o.known_sizes = std::make_shared<const data::input_sizes>(data::input_sizes{{gz, text.size() / 3}});
    const auto r = read_all(o, 16);
    CHECK(r.error.empty());
    total += r.all.size;
  }
  CHECK(total > 90);
  CHECK(total < 110);
}

TEST_CASE("truncated and corrupt compressed data: the file, the line reached and what was expected") {
  temp_dir dir;
  const std::string text = criteo_text(2000);
  const std::string gz = gzip_bytes(text), zst = zstd_bytes(text);
  const auto cut_gz = dir.write("cut.gz", gz.substr(0, gz.size() / 2));
  auto r = read_all(options_for({cut_gz}), 64);
  CHECK(r.all.size > 100); // the lines before the cut were read
  CHECK(r.all.size < 2000);
  CHECK(r.error.rfind(cut_gz + ":" + std::to_string(r.all.size + 1) + ": the gzip data of '" + cut_gz +
                        "' is truncated",
                      0) == 0);
  CHECK(r.error.find("expected more compressed data") != std::string::npos);

  const auto cut_zst = dir.write("cut.zst", zst.substr(0, zst.size() - 9));
  r = read_all(options_for({cut_zst}), 64);
  CHECK(r.error.find(cut_zst + ":") == 0);
  CHECK(r.error.find("zstd data of '" + cut_zst + "' is truncated") != std::string::npos);

  std::string bad = gz;
  for (std::size_t i = bad.size() / 2; i < bad.size() / 2 + 64; ++i)
    bad[i] = char(bad[i] ^ 0x5a);
  const auto bad_gz = dir.write("bad.gz", bad);
  r = read_all(options_for({bad_gz}), 64);
  CHECK(r.error.find(bad_gz + ":") == 0);
  CHECK(r.error.find("the gzip data of '" + bad_gz + "' is corrupt (") != std::string::npos);
  CHECK(r.error.find("expected valid gzip data") != std::string::npos);

  bad = zst;
  for (std::size_t i = bad.size() / 2; i < bad.size() / 2 + 64; ++i)
    bad[i] = char(bad[i] ^ 0x5a);
  const auto bad_zst = dir.write("bad.zst", bad);
  r = read_all(options_for({bad_zst}), 64);
  CHECK(r.error.find("the zstd data of '" + bad_zst + "' is corrupt (") != std::string::npos);
  // Nothing the user owns was changed.
  CHECK(std::filesystem::file_size(bad_zst) == bad.size());
}

// Its own ctest entry with the other shared-data cases (data_criteo).
TEST_CASE("shared Criteo sample: gzip and zstd copies read the same 8000 examples") {
  const std::string path = std::string(SS_SHARED_DATA_DIR) + "/criteo-kaggle-head10k/train-8k.tsv";
  REQUIRE_MESSAGE(std::filesystem::exists(path), path << " is absent");
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  temp_dir dir;
  const auto plain = read_all(options_for({path}), 512);
  REQUIRE(plain.all.size == 8000);
  check_same(plain, read_all(options_for({dir.write("train.gz", gzip_bytes(text))}), 512));
  check_same(plain, read_all(options_for({dir.write("train.zst", zstd_bytes(text))}), 512));
}
