#include "checkpoint/cpr_files.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <filesystem>

#include "checkpoint/array_file.hpp"
#include "checkpoint/cpr_chain.hpp"
#include "checkpoint/dir_lock.hpp"
#include "checkpoint/file_io.hpp"

namespace checkpoint {

namespace {

namespace fs = std::filesystem;

file_header cpr_header(const cpr_shape& s, std::uint64_t seq, std::uint64_t n, bool full) {
  file_header h;
  h.kind = "cpr";
  h.attrs = {{"tables", s.tables}, {"local_rows", s.local_rows}, {"dim", s.dim},
             {"state_per_row", s.state_per_row}, {"shard", s.shard},
             {"num_shards", s.num_shards}, {"seq", seq}, {"full", full ? 1u : 0u}};
  if (!full)
    h.arrays.push_back({"rows", 2 * n});
  h.arrays.push_back({"weights", n * s.dim});
  h.arrays.push_back({"state", n * s.state_per_row});
  return h;
}

bool fail(std::string* err, std::string text) {
  if (err)
    *err = std::move(text);
  return false;
}

} // namespace

std::string cpr_folder_name(std::uint64_t shard) {
  return "embedding-" + std::to_string(shard);
}

namespace {

// Writes save `seq` whose rows are `rows` (null: every row); `payload`
// writes the weights and then the state of those rows, in order.
bool write_save(const std::string& folder, const cpr_shape& shape, std::uint64_t seq,
                std::int64_t at_ns, const std::vector<std::uint64_t>* rows,
                const std::function<bool(file_sink&, std::string*)>& payload,
                cpr_save_info* info, std::string* err) {
  if (auto bad = check_rows(shape, rows))
    return fail(err, *bad);
  const bool full = rows == nullptr;
  cpr_save_info s;
  s.seq = seq;
  s.full = full;
  s.rows = full ? shape.rows() : rows->size();
  s.at_ns = at_ns;
  auto write = [&](file_sink& f, std::string* e) {
    return write_array_header(f, cpr_header(shape, seq, s.rows, full), e) &&
           (full || f.write(rows->data(), s.rows * sizeof(std::uint64_t), e)) && payload(f, e);
  };
  return commit_cpr_save(folder, shape, s, write, info, err);
}

} // namespace

bool commit_cpr_save(const std::string& folder, const cpr_shape& shape, cpr_save_info s,
                     const std::function<bool(file_sink&, std::string*)>& write,
                     cpr_save_info* info, std::string* err) {
  // One process owns a shard's folder (a multi-node shard writes it alone,
  // its restart after the owner died takes it over): created and locked.
  if (auto e = lock_checkpoint_dir(folder))
    return fail(err, *e);
  std::error_code ec;
  const bool full = s.full;
  // The chain so far: a partial save extends it; a full one replaces it (a
  // damaged old chain included) and removes its files.
  std::vector<cpr_save_info> chain;
  if (fs::exists(folder + "/chain.json")) {
    std::string why;
    if (!read_chain(folder, shape, chain, &why)) {
      if (!full)
        return fail(err, why);
      chain.clear();
    }
  }
  if (!full && chain.empty())
    return fail(err, "'" + folder + "': a partial save needs a full one before it");
  s.file = save_name(s.seq);
  // A save that fails (ENOSPC, say) leaves no file behind: the chain never
  // named it, and the caller keeps its rows marked for the next try.
  const std::string path = folder + "/" + s.file;
  auto discard = [&] {
    fs::remove(path, ec);
    return false;
  };
  file_sink f;
  if (!f.open(path, err) || !write(f, err) || !f.close(err))
    return discard();
  s.bytes = f.bytes();
  s.crc32c = f.crc();
  std::vector<std::string> obsolete;
  if (full) {
    for (const auto& old : chain)
      obsolete.push_back(old.file);
    chain.clear();
  }
  chain.push_back(s);
  if (!write_chain(folder, shape, chain, err) || !fsync_dir(folder, err)) {
    // Kept only when chain.json names it after all (its rename landed and a
    // later fsync failed).
    std::vector<cpr_save_info> now;
    if (!read_chain(folder, shape, now, nullptr) || now.back().file != s.file)
      discard();
    return false;
  }
  for (const auto& name : obsolete)
    fs::remove(folder + "/" + name, ec); // best effort: the chain no longer names it
  if (info)
    *info = s;
  return true;
}

namespace {

// Copies `width` floats of each of `rows` out of `src`, in order.
void gather(const float* src, std::uint64_t width, const std::vector<std::uint64_t>& rows,
            std::vector<float>& out) {
  out.resize(std::size_t(rows.size() * width));
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::memcpy(out.data() + i * width, src + rows[i] * width, width * sizeof(float));
}

} // namespace

std::optional<std::string> check_rows(const cpr_shape& shape,
                                      const std::vector<std::uint64_t>* rows) {
  if (rows)
    for (auto r : *rows)
      if (r >= shape.rows())
        return "write_cpr_save: row " + std::to_string(r) + " of " + std::to_string(shape.rows());
  return std::nullopt;
}

bool write_cpr_save(const std::string& folder, const cpr_shape& shape, std::uint64_t seq,
                    std::int64_t at_ns, const float* weights, const float* state,
                    const std::vector<std::uint64_t>* rows, cpr_save_info* info,
                    std::string* err) {
  auto payload = [&](file_sink& f, std::string* e) {
    if (!rows)
      return f.write(weights, shape.rows() * shape.dim * sizeof(float), e) &&
             f.write(state, shape.rows() * shape.state_per_row * sizeof(float), e);
    // The rows gathered first: file_sink does not buffer, and one write
    // per row would be a system call per row.
    std::vector<float> buf;
    for (auto [src, width] : {std::pair{weights, shape.dim}, std::pair{state, shape.state_per_row}}) {
      gather(src, width, *rows, buf);
      if (!f.write(buf.data(), buf.size() * sizeof(float), e))
        return false;
    }
    return true;
  };
  return write_save(folder, shape, seq, at_ns, rows, payload, info, err);
}

std::optional<std::string> gather_cpr_rows(const cpr_shape& shape, const float* weights,
                                           const float* state,
                                           const std::vector<std::uint64_t>* rows,
                                           cpr_rows* out) {
  if (auto bad = check_rows(shape, rows))
    return bad;
  out->full = rows == nullptr;
  if (out->full) {
    out->rows.clear();
    out->weights.assign(weights, weights + shape.rows() * shape.dim);
    out->state.assign(state, state + shape.rows() * shape.state_per_row);
  } else {
    out->rows = *rows;
    gather(weights, shape.dim, *rows, out->weights);
    gather(state, shape.state_per_row, *rows, out->state);
  }
  return std::nullopt;
}

bool write_cpr_rows(const std::string& folder, const cpr_shape& shape, std::uint64_t seq,
                    std::int64_t at_ns, const cpr_rows& rows, cpr_save_info* info,
                    std::string* err) {
  const std::uint64_t n = rows.full ? shape.rows() : rows.rows.size();
  if (rows.weights.size() != n * shape.dim || rows.state.size() != n * shape.state_per_row)
    return fail(err, "write_cpr_rows: the gathered rows do not fit the shard's shape");
  auto payload = [&](file_sink& f, std::string* e) {
    return f.write(rows.weights.data(), rows.weights.size() * sizeof(float), e) &&
           f.write(rows.state.data(), rows.state.size() * sizeof(float), e);
  };
  return write_save(folder, shape, seq, at_ns, rows.full ? nullptr : &rows.rows, payload, info,
                    err);
}

std::optional<std::string> load_cpr_chain(const std::string& folder, const cpr_shape& shape,
                                          float* weights, float* state, cpr_loaded* out) {
  *out = cpr_loaded{};
  if (!fs::exists(folder + "/chain.json"))
    return std::nullopt;
  std::string err;
  std::vector<cpr_save_info> chain;
  if (!read_chain(folder, shape, chain, &err))
    return err;
  std::vector<std::uint64_t> rows;
  std::vector<float> buf;
  for (const auto& s : chain) {
    const auto path = folder + "/" + s.file;
    array_file_reader r;
    if (!r.open(path, "cpr", &err))
      return err;
    const auto& h = r.header();
    const cpr_shape got{h.attr("tables"), h.attr("local_rows"), h.attr("dim"),
                        h.attr("state_per_row"), h.attr("shard"), h.attr("num_shards")};
    if (got.tables != shape.tables || got.local_rows != shape.local_rows ||
        got.dim != shape.dim || got.state_per_row != shape.state_per_row ||
        got.shard != shape.shard || got.num_shards != shape.num_shards)
      return "'" + path + "' holds shard " + std::to_string(got.shard) + " of " +
             std::to_string(got.num_shards) + " with " + std::to_string(got.tables) +
             " tables x " + std::to_string(got.local_rows) + " rows x dim " +
             std::to_string(got.dim) + ", expected shard " + std::to_string(shape.shard) +
             " of " + std::to_string(shape.num_shards) + " with " +
             std::to_string(shape.tables) + " x " + std::to_string(shape.local_rows) +
             " x dim " + std::to_string(shape.dim);
    if (h.attr("seq") != s.seq || (h.attr("full") == 1) != s.full)
      return "'" + path + "' is save " + std::to_string(h.attr("seq")) +
             ", chain.json expects save " + std::to_string(s.seq);
    // Every array's length is compared with the shard's shape before a
    // float is placed (a well-formed file may claim more than the shard has).
    const std::string whom = "the shard (" + std::to_string(shape.rows()) + " rows)";
    if (s.full) {
      const std::uint64_t nw = shape.rows() * shape.dim, ns = shape.rows() * shape.state_per_row;
      if (!r.expect_arrays({{"weights", nw}, {"state", ns}}, whom, &err) ||
          !r.read("weights", weights, nw, &err) || !r.read("state", state, ns, &err))
        return err;
    } else {
      if (h.arrays.empty() || h.arrays[0].name != "rows" || h.arrays[0].count % 2 != 0)
        return "'" + path + "': a partial save without its row list";
      const std::uint64_t n = h.arrays[0].count / 2;
      if (n > shape.rows())
        return "'" + path + "': " + std::to_string(n) + " rows, the shard has " +
               std::to_string(shape.rows());
      if (!r.expect_arrays({{"rows", 2 * n}, {"weights", n * shape.dim},
                            {"state", n * shape.state_per_row}},
                           "a save of " + std::to_string(n) + " rows", &err))
        return err;
      rows.resize(std::size_t(n));
      // The row list is uint64 words in a 4-byte-word array: read as bytes.
      if (!r.read("rows", reinterpret_cast<float*>(rows.data()), 2 * n, &err))
        return err;
      for (auto row : rows)
        if (row >= shape.rows())
          return "'" + path + "': row " + std::to_string(row) + " out of range (" +
                 std::to_string(shape.rows()) + " rows)";
      buf.resize(std::size_t(n * std::max(shape.dim, shape.state_per_row)));
      if (!r.read("weights", buf.data(), n * shape.dim, &err))
        return err;
      for (std::size_t i = 0; i < rows.size(); ++i)
        std::memcpy(weights + rows[i] * shape.dim, buf.data() + i * shape.dim,
                    shape.dim * sizeof(float));
      if (!r.read("state", buf.data(), n * shape.state_per_row, &err))
        return err;
      for (std::size_t i = 0; i < rows.size(); ++i)
        std::memcpy(state + rows[i] * shape.state_per_row, buf.data() + i * shape.state_per_row,
                    shape.state_per_row * sizeof(float));
    }
    std::uint32_t crc = 0;
    if (!r.finish(&crc, &err))
      return err;
    if (r.size() != s.bytes || crc != s.crc32c)
      return "'" + path + "': " + std::to_string(r.size()) + " bytes with CRC32C " +
             std::to_string(crc) + ", chain.json expects " + std::to_string(s.bytes) +
             " bytes with CRC32C " + std::to_string(s.crc32c);
    out->bytes += r.size();
  }
  out->saves = chain;
  out->newest_at_ns = chain.back().at_ns;
  out->next_seq = chain.back().seq + 1;
  return std::nullopt;
}

} // namespace checkpoint
