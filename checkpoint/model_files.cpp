#include "checkpoint/model_files.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "model/shard_layout.hpp"

namespace checkpoint {

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

} // namespace

std::string embedding_file_name(std::uint64_t shard) {
  return "embedding-" + std::to_string(shard) + ".bin";
}

std::string replica_file_name(std::uint64_t trainer) {
  return "replica-" + std::to_string(trainer) + ".bin";
}

embedding_shard_view shard_view(const model::embedding_tables& local, std::uint64_t rows_per_table,
                                std::uint64_t shard, std::uint64_t num_shards) {
  embedding_shard_view v;
  v.weights = local.weights().data();
  v.state = local.accumulators().data();
  v.tables = local.num_tables();
  v.rows_per_table = rows_per_table;
  v.dim = local.dim();
  v.state_per_row = local.state_per_row();
  v.shard = shard;
  v.num_shards = num_shards;
  v.local_rows = local.rows_per_table();
  return v;
}

file_header embedding_header(const embedding_shard_view& v) {
  file_header h;
  h.kind = "embedding";
  h.attrs = {{"tables", v.tables},       {"rows_per_table", v.rows_per_table},
             {"dim", v.dim},             {"state_per_row", v.state_per_row},
             {"shard", v.shard},         {"num_shards", v.num_shards},
             {"local_rows", v.local_rows}};
  h.arrays = {{"weights", v.tables * v.local_rows * v.dim},
              {"state", v.tables * v.local_rows * v.state_per_row}};
  return h;
}

bool write_embedding_file(const std::string& folder, const embedding_shard_view& v,
                          file_info* info, std::string* err) {
  info->name = embedding_file_name(v.shard);
  return write_array_file(folder + "/" + info->name, embedding_header(v), {v.weights, v.state},
                          info, err);
}

file_image embedding_image(const embedding_shard_view& v) {
  return file_image(embedding_file_name(v.shard), embedding_header(v),
                    std::vector<const float*>{v.weights, v.state});
}

bool write_embedding_shard(folder_writer& w, const embedding_shard_view& v, std::string* err) {
  file_info info;
  if (!write_embedding_file(w.folder(), v, &info, err))
    return false;
  w.add(info);
  return true;
}

bool write_replica(folder_writer& w, std::uint64_t trainer, const float* params,
                   const float* state, std::size_t size, std::string* err) {
  file_header h;
  h.kind = "replica";
  h.attrs = {{"trainer", trainer}, {"size", size}};
  h.arrays = {{"params", size}, {"state", size}};
  file_info info;
  info.name = replica_file_name(trainer);
  if (!write_array_file(w.path(info.name), h, {params, state}, &info, err))
    return false;
  w.add(info);
  return true;
}

std::optional<std::string> load_embeddings(const opened_checkpoint& c, model::embedding_tables& t) {
  const std::uint64_t num_tables = t.num_tables(), rows_per_table = t.rows_per_table();
  const std::uint64_t dim = t.dim(), spr = t.state_per_row();
  std::vector<std::string> names;
  for (const auto& f : c.m.files)
    if (starts_with(f.name, "embedding-"))
      names.push_back(f.name);
  if (names.empty())
    return "'" + c.folder + "' has no embedding file";
  // Every file's header, attributes and array lengths are checked against
  // the model before the first row is placed: a file that claims (and
  // holds) more rows than the tables is refused, not written past them.
  const std::uint64_t n = names.size(), lr = model::local_rows(rows_per_table, n);
  std::vector<std::unique_ptr<array_file_reader>> readers;
  std::vector<bool> seen(std::size_t(n), false);
  std::string err;
  for (const auto& name : names) {
    auto r = std::make_unique<array_file_reader>();
    if (!r->open(c.file(name), "embedding", &err))
      return err;
    const auto& h = r->header();
    const std::uint64_t s = h.attr("shard"), hn = h.attr("num_shards");
    auto mismatch = [&](const char* what, std::uint64_t got, std::uint64_t want) {
      return "'" + r->path() + "': " + what + " " + std::to_string(got) + ", the model has " +
             std::to_string(want);
    };
    if (h.attr("tables") != num_tables)
      return mismatch("tables", h.attr("tables"), num_tables);
    if (h.attr("rows_per_table") != rows_per_table)
      return mismatch("rows per table", h.attr("rows_per_table"), rows_per_table);
    if (h.attr("dim") != dim)
      return mismatch("dim", h.attr("dim"), dim);
    if (h.attr("state_per_row") != spr)
      return mismatch("optimiser state per row", h.attr("state_per_row"), spr);
    if (hn != n)
      return "'" + r->path() + "' is shard " + std::to_string(s) + " of " + std::to_string(hn) +
             ", but the checkpoint has " + std::to_string(n) + " embedding files";
    if (s >= n || seen[std::size_t(s)] || h.attr("local_rows") != lr)
      return "'" + r->path() + "': shard " + std::to_string(s) + " of " + std::to_string(n) +
             " with " + std::to_string(h.attr("local_rows")) + " local rows does not fit the " +
             "other files (" + std::to_string(n) + " shards of " + std::to_string(lr) + " rows)";
    seen[std::size_t(s)] = true;
    if (!r->expect_arrays({{"weights", num_tables * lr * dim}, {"state", num_tables * lr * spr}},
                          "the model (" + std::to_string(num_tables) + " tables x " +
                            std::to_string(lr) + " local rows)",
                          &err))
      return err;
    readers.push_back(std::move(r));
  }
  for (std::size_t f = 0; f < readers.size(); ++f) {
    auto& r = *readers[f];
    const std::uint64_t s = r.header().attr("shard");
    // Row-by-row placement; chunks hold whole rows. flat < tables * lr by
    // the lengths checked above.
    auto place = [&](std::uint64_t width, bool weights) {
      return [&, width, weights](std::uint64_t off, const float* p, std::size_t count) {
        for (std::size_t i = 0; i < count; i += std::size_t(width)) {
          const std::uint64_t flat = (off + i) / width; // t * lr + l
          const std::uint64_t table = flat / lr, row = model::global_row(flat % lr, s, n);
          if (row >= rows_per_table)
            continue; // padding of the last shard's rows
          const auto key = model::row_key(std::size_t(table), row);
          float* dst = weights ? t.row(key) : t.accumulator(key);
          std::memcpy(dst, p + i, width * sizeof(float));
        }
      };
    };
    std::vector<float> buf;
    const std::size_t rows_per_chunk = 4096;
    if (!r.read_chunked("weights", num_tables * lr * dim, buf, rows_per_chunk * dim,
                        place(dim, true), &err))
      return err;
    if (spr > 0) {
      if (!r.read_chunked("state", num_tables * lr * spr, buf, rows_per_chunk * spr,
                          place(spr, false), &err))
        return err;
    } else if (!r.read("state", nullptr, 0, &err)) {
      return err;
    }
    std::uint32_t crc = 0;
    if (!r.finish(&crc, &err))
      return err;
    if (auto e = check_crc(c, names[f], crc))
      return e;
  }
  return std::nullopt;
}

std::optional<std::string> load_replicas(const opened_checkpoint& c, std::size_t size,
                                         std::vector<replica_state>& out) {
  out.clear();
  std::string err;
  for (std::uint64_t t = 0;; ++t) {
    const auto name = replica_file_name(t);
    if (!c.entry(name))
      break;
    array_file_reader r;
    if (!r.open(c.file(name), "replica", &err))
      return err;
    if (!r.expect_arrays({{"params", size}, {"state", size}}, "the model's dense part", &err))
      return err;
    replica_state s;
    s.params.resize(size);
    s.state.resize(size);
    std::uint32_t crc = 0;
    if (!r.read("params", s.params.data(), size, &err) ||
        !r.read("state", s.state.data(), size, &err) || !r.finish(&crc, &err))
      return err;
    if (auto e = check_crc(c, name, crc))
      return e;
    out.push_back(std::move(s));
  }
  if (out.empty())
    return "'" + c.folder + "' has no dense replica (replica-0.bin)";
  return std::nullopt;
}

replica_state average(const std::vector<replica_state>& reps) {
  replica_state avg;
  avg.params.assign(reps.front().params.size(), 0.0f);
  avg.state.assign(reps.front().state.size(), 0.0f);
  for (const auto& r : reps)
    for (std::size_t i = 0; i < r.params.size(); ++i) {
      avg.params[i] += r.params[i];
      avg.state[i] += r.state[i];
    }
  const float inv = 1.0f / float(reps.size());
  for (std::size_t i = 0; i < avg.params.size(); ++i) {
    avg.params[i] *= inv;
    avg.state[i] *= inv;
  }
  return avg;
}

} // namespace checkpoint

namespace checkpoint {

namespace {

struct named_array {
  const char* name;
  std::vector<float>* out;
};

// A file of `kind` holding the named arrays of `size` floats each.
bool write_arrays(folder_writer& w, const std::string& file, const std::string& kind,
                  const std::vector<std::pair<const char*, const float*>>& arrays,
                  std::size_t size, std::string* err) {
  file_header h;
  h.kind = kind;
  h.attrs = {{"size", size}};
  std::vector<const float*> data;
  for (const auto& [name, p] : arrays) {
    h.arrays.push_back({name, size});
    data.push_back(p);
  }
  file_info info;
  info.name = file;
  if (!write_array_file(w.path(info.name), h, data, &info, err))
    return false;
  w.add(info);
  return true;
}

std::optional<std::string> load_arrays(const opened_checkpoint& c, const std::string& file,
                                       const std::string& kind, std::size_t size,
                                       const std::vector<named_array>& arrays, bool* found) {
  *found = c.entry(file) != nullptr;
  if (!*found)
    return std::nullopt;
  std::string err;
  array_file_reader r;
  if (!r.open(c.file(file), kind, &err))
    return err;
  std::vector<array_spec> want;
  for (const auto& a : arrays)
    want.push_back({a.name, size});
  if (!r.expect_arrays(want, "the model's dense part", &err))
    return err;
  for (const auto& a : arrays) {
    a.out->resize(size);
    if (!r.read(a.name, a.out->data(), size, &err))
      return err;
  }
  std::uint32_t crc = 0;
  if (!r.finish(&crc, &err))
    return err;
  return check_crc(c, file, crc);
}

} // namespace

bool write_centre(folder_writer& w, const float* params, std::size_t size, std::string* err) {
  return write_arrays(w, "centre.bin", "centre", {{"params", params}}, size, err);
}

std::optional<std::string> load_centre(const opened_checkpoint& c, std::size_t size,
                                       std::vector<float>& out, bool* found) {
  return load_arrays(c, "centre.bin", "centre", size, {{"params", &out}}, found);
}

bool write_bmuf(folder_writer& w, const float* global, const float* momentum, std::size_t size,
                std::string* err) {
  return write_arrays(w, "bmuf.bin", "bmuf", {{"global", global}, {"momentum", momentum}}, size,
                      err);
}

std::optional<std::string> load_bmuf(const opened_checkpoint& c, std::size_t size,
                                     std::vector<float>& global, std::vector<float>& momentum,
                                     bool* found) {
  return load_arrays(c, "bmuf.bin", "bmuf", size, {{"global", &global}, {"momentum", &momentum}},
                     found);
}

} // namespace checkpoint
