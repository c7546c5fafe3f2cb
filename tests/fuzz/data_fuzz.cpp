// The data path: data::reader over a file holding the input (Criteo schema),
// with a chunk size, part split and layout chosen by the first bytes, and the
// line parser on each line. The layout (second byte / 3, mod 4): single-hot
// with labels (0), columns C1 and C3 multi-hot with bags of at most 4 ids
// (1), labels absent or present (2: predict's input), both (3). The file may
// be anything, gzip or zstd too (detected by magic bytes). Properties: lines
// = examples + malformed; the batches hold exactly `examples` rows; every
// value read is finite; every multi-hot batch's bags are in order, end at
// its ids' count and hold at most 4 ids each.
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <string_view>

#include "data/line_parser.hpp"
#include "data/reader.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

// One in-memory file for the whole run; /proc/self/fd/N is its path.
struct scratch_file {
  int fd = memfd_create("fuzz-data", 0);
  std::string path = "/proc/self/fd/" + std::to_string(fd);
};

const scratch_file& scratch() {
  static const scratch_file f;
  FUZZ_CHECK(f.fd >= 0);
  return f;
}

void write_scratch(const std::uint8_t* data, std::size_t size) {
  FUZZ_CHECK(ftruncate(scratch().fd, 0) == 0);
  FUZZ_CHECK(pwrite(scratch().fd, data, size, 0) == ssize_t(size));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2)
    return 0;
  const std::size_t chunk = 1 + data[0] % 64; // tiny reads cross every boundary
  const std::size_t parts = 1 + data[1] % 3;
  const unsigned layout = (data[1] / 3) % 4;
  data += 2;
  size -= 2;
  write_scratch(data, size);
  std::uint64_t lines = 0, examples = 0, malformed = 0;
  for (std::size_t part = 0; part < parts; ++part) {
    data::reader_options o;
    o.files = {scratch().path};
    o.chunk_bytes = chunk;
    o.part = part;
    o.num_parts = parts;
    if (layout & 1) {
      o.schema.multi_hot = {"C1", "C3"};
      o.schema.max_ids = 4;
    }
    if (layout & 2)
      o.labels = data::label_presence::either;
    std::string err;
    auto r = data::reader::open(o, &err);
    FUZZ_CHECK(r != nullptr || !err.empty());
    if (!r)
      return 0;
    data::batch b;
    std::uint64_t rows = 0;
    while (r->next(b, 7)) {
      rows += b.size;
      for (float x : b.dense)
        FUZZ_CHECK(std::isfinite(x));
      for (float y : b.labels)
        FUZZ_CHECK(y == 0.0f || y == 1.0f);
      if (b.multi_hot()) {
        FUZZ_CHECK(b.cat_offsets.size() == b.size * b.num_cat + 1);
        FUZZ_CHECK(b.cat_offsets.front() == 0 && b.cat_offsets.back() == b.cat.size());
        for (std::size_t i = 1; i < b.cat_offsets.size(); ++i)
          FUZZ_CHECK(b.cat_offsets[i] >= b.cat_offsets[i - 1] &&
                     b.cat_offsets[i] - b.cat_offsets[i - 1] <= 4);
      } else {
        FUZZ_CHECK(b.cat.size() == b.size * b.num_cat);
      }
      b.clear();
    }
    // A fatal error (a compressed stream cut short or corrupt) leaves the
    // examples read before it in the batch (reader::next).
    FUZZ_CHECK(b.size == 0 || !r->error().empty());
    rows += b.size;
    const auto& st = r->statistics();
    FUZZ_CHECK(st.lines == st.examples + st.malformed);
    FUZZ_CHECK(rows == st.examples);
    lines += st.lines;
    examples += st.examples;
    malformed += st.malformed;
  }
  FUZZ_CHECK(lines == examples + malformed);
  // The line parser alone, on every line of the input.
  data::resolved_schema schema;
  std::string err;
  FUZZ_CHECK(data::resolve_schema(data::schema_options::criteo(), nullptr, "fuzz", &schema, &err));
  data::line_parser parser(&schema);
  std::vector<float> dense(schema.num_dense);
  std::vector<std::uint64_t> cat(schema.num_cat);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    float label = 0;
    data::line_error e;
    if (parser.parse(line, &label, dense.data(), cat.data(), &e)) {
      for (float x : dense)
        FUZZ_CHECK(std::isfinite(x));
    } else {
      FUZZ_CHECK(!data::describe(schema, e).empty());
    }
  }
  return 0;
}
