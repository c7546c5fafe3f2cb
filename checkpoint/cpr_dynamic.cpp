#include "checkpoint/cpr_dynamic.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "checkpoint/array_file.hpp"
#include "checkpoint/cpr_chain.hpp"
#include "checkpoint/file_io.hpp"
#include "checkpoint/packed_words.hpp"

namespace checkpoint {

namespace {

constexpr std::size_t stats_per_table = 6;

// The arrays of a save, in file order, with their lengths in float slots.
std::vector<array_spec> arrays_of(std::uint64_t tables, std::uint64_t dim, std::uint64_t spr,
                                  std::uint64_t n, std::uint64_t live, std::uint64_t cells) {
  return {{"table_rows", slots<std::uint32_t>(tables)},
          {"ids", slots<std::uint64_t>(n)},
          {"last", slots<std::uint64_t>(n)},
          {"counts", slots<std::uint32_t>(n)},
          {"weights", n * dim},
          {"state", n * spr},
          {"live_rows", slots<std::uint32_t>(tables)},
          {"live_ids", slots<std::uint64_t>(live)},
          {"tables", slots<std::uint64_t>(tables * stats_per_table)},
          {"sketch", slots<std::uint16_t>(tables * cells)},
          {"additions", slots<std::uint64_t>(tables)}};
}

// A row of the reload: its entry, then its weights and state.
struct staged {
  model::dynamic_table::saved_row r;
  std::vector<float> values;
};

} // namespace

std::optional<std::string> gather_cpr_dynamic(const cpr_shape& shape,
                                              const model::dynamic_tables& t,
                                              const std::vector<std::uint64_t>* slots,
                                              std::uint64_t served, cpr_dynamic_rows* out) {
  const std::size_t T = t.num_tables(), dim = t.dim(), spr = t.state_per_row();
  if (T != shape.tables || dim != shape.dim || spr != shape.state_per_row ||
      t.settings().max_rows != shape.local_rows)
    return std::string("gather_cpr_dynamic: the tables do not have the shard's shape");
  *out = cpr_dynamic_rows{};
  out->full = slots == nullptr;
  out->served = served;
  out->table_rows.assign(T, 0);
  out->live_rows.assign(T, 0);
  std::vector<std::vector<model::dynamic_table::saved_row>> chosen(T);
  if (slots) {
    for (const auto s : *slots) {
      if (s >= shape.rows())
        return "gather_cpr_dynamic: slot " + std::to_string(s) + " of " +
               std::to_string(shape.rows());
      const auto k = std::size_t(s / shape.local_rows);
      const auto slot = std::uint32_t(s % shape.local_rows);
      if (t.table(k).holds(slot)) // else freed since its update
        chosen[k].push_back(t.table(k).saved_at(slot));
    }
  }
  for (std::size_t k = 0; k < T; ++k) {
    const auto& tab = t.table(k);
    auto all = tab.saved_rows(); // ascending id
    if (slots) {
      out->live_rows[k] = std::uint32_t(all.size());
      for (const auto& r : all)
        out->live_ids.push_back(r.id);
      all = std::move(chosen[k]);
      std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    }
    out->table_rows[k] = std::uint32_t(all.size());
    for (const auto& r : all) {
      out->ids.push_back(r.id);
      out->last.push_back(r.last);
      out->counts.push_back(r.count);
      const auto slot = tab.slot_of(r.id);
      out->weights.insert(out->weights.end(), tab.row(slot), tab.row(slot) + dim);
      out->state.insert(out->state.end(), tab.accumulator(slot), tab.accumulator(slot) + spr);
    }
    const auto& x = tab.stats();
    out->stats.insert(out->stats.end(), {tab.next_expiry(), x.admissions, x.evictions,
                                         x.expired, x.lookups, x.missing});
    const auto& c = tab.sketch().counters();
    out->sketch.insert(out->sketch.end(), c.begin(), c.end());
    out->additions.push_back(tab.sketch().additions());
  }
  out->sketch_width = t.table(0).sketch().width();
  out->sketch_depth = t.table(0).sketch().depth();
  return std::nullopt;
}

bool write_cpr_dynamic(const std::string& folder, const cpr_shape& shape, std::uint64_t seq,
                       std::int64_t at_ns, const cpr_dynamic_rows& rows, cpr_save_info* info,
                       std::string* err) {
  const std::uint64_t n = rows.ids.size(), live = rows.live_ids.size();
  file_header h;
  h.kind = "cpr-dynamic";
  h.attrs = {{"tables", shape.tables},    {"max_rows", shape.local_rows},
             {"dim", shape.dim},          {"state_per_row", shape.state_per_row},
             {"shard", shape.shard},      {"num_shards", shape.num_shards},
             {"seq", seq},                {"full", rows.full ? 1u : 0u},
             {"rows", n},                 {"live", live},
             {"served", rows.served},     {"sketch_width", rows.sketch_width},
             {"sketch_depth", rows.sketch_depth}};
  const std::vector<std::vector<float>> arrays{
    pack(rows.table_rows), pack(rows.ids),   pack(rows.last),      pack(rows.counts),
    rows.weights,          rows.state,       pack(rows.live_rows), pack(rows.live_ids),
    pack(rows.stats),      pack(rows.sketch), pack(rows.additions)};
  const auto specs = arrays_of(shape.tables, shape.dim, shape.state_per_row, n, live,
                               rows.sketch_width * rows.sketch_depth);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (arrays[i].size() != specs[i].count) {
      if (err)
        *err = "write_cpr_dynamic: array '" + specs[i].name + "' does not fit the save";
      return false;
    }
    h.arrays.push_back(specs[i]);
  }
  cpr_save_info s;
  s.seq = seq;
  s.full = rows.full;
  s.rows = n;
  s.at_ns = at_ns;
  auto write = [&](file_sink& f, std::string* e) {
    if (!write_array_header(f, h, e))
      return false;
    for (const auto& a : arrays)
      if (!f.write(a.data(), a.size() * sizeof(float), e))
        return false;
    return true;
  };
  return commit_cpr_save(folder, shape, s, write, info, err);
}

std::optional<std::string> load_cpr_dynamic_chain(const std::string& folder,
                                                  const cpr_shape& shape,
                                                  model::dynamic_tables& t,
                                                  std::uint64_t* served, cpr_loaded* out) {
  *out = cpr_loaded{};
  if (!std::filesystem::exists(folder + "/chain.json"))
    return std::nullopt;
  std::string err;
  std::vector<cpr_save_info> chain;
  if (!read_chain(folder, shape, chain, &err))
    return err;
  if (chain.empty())
    return std::nullopt;
  const std::uint64_t T = shape.tables, dim = shape.dim, spr = shape.state_per_row;
  if (t.num_tables() != T || t.dim() != dim || t.state_per_row() != spr ||
      t.settings().max_rows != shape.local_rows)
    return std::string("load_cpr_dynamic_chain: the tables do not have the shard's shape");
  for (std::size_t k = 0; k < T; ++k)
    if (t.table(k).rows() != 0)
      return std::string("load_cpr_dynamic_chain: the tables are not empty");
  const auto& sk = t.table(0).sketch();
  const std::uint64_t cells = sk.width() * sk.depth();
  std::vector<std::unordered_map<std::uint64_t, staged>> rows(T);
  std::vector<std::vector<float>> newest; // the newest save's tables, sketch, additions
  std::uint64_t clock = 0;
  for (const auto& s : chain) {
    const auto path = folder + "/" + s.file;
    array_file_reader r;
    if (!r.open(path, "cpr-dynamic", &err))
      return err;
    const auto& h = r.header();
    auto at = [&](const std::string& what) { return "'" + path + "': " + what; };
    if (h.attr("tables") != T || h.attr("max_rows") != shape.local_rows ||
        h.attr("dim") != dim || h.attr("state_per_row") != spr ||
        h.attr("shard") != shape.shard || h.attr("num_shards") != shape.num_shards)
      return at("shard " + std::to_string(h.attr("shard")) + " of " +
                std::to_string(h.attr("num_shards")) + " with " +
                std::to_string(h.attr("tables")) + " tables of " +
                std::to_string(h.attr("max_rows")) + " rows, dim " +
                std::to_string(h.attr("dim")) + ", expected shard " +
                std::to_string(shape.shard) + " of " + std::to_string(shape.num_shards) +
                " with " + std::to_string(T) + " of " + std::to_string(shape.local_rows) +
                ", dim " + std::to_string(dim));
    if (h.attr("seq") != s.seq || (h.attr("full") == 1) != s.full)
      return at("save " + std::to_string(h.attr("seq")) + ", chain.json expects save " +
                std::to_string(s.seq));
    if (h.attr("sketch_width") * h.attr("sketch_depth") != cells)
      return at("an admission sketch of " +
                std::to_string(h.attr("sketch_width") * h.attr("sketch_depth")) +
                " counters, the shard's has " + std::to_string(cells));
    const std::uint64_t n = h.attr("rows"), live = h.attr("live");
    if (n > shape.rows() || live > shape.rows())
      return at(std::to_string(n) + " rows, " + std::to_string(live) + " held; the shard has " +
                std::to_string(shape.rows()));
    const auto want = arrays_of(T, dim, spr, n, live, cells);
    if (!r.expect_arrays(want, "a save of " + std::to_string(n) + " rows", &err))
      return err;
    std::vector<std::vector<float>> a;
    if (!r.read_all(want, &a, &err))
      return err;
    std::uint32_t crc = 0;
    if (!r.finish(&crc, &err))
      return err;
    if (r.size() != s.bytes || crc != s.crc32c)
      return at(std::to_string(r.size()) + " bytes with CRC32C " + std::to_string(crc) +
                ", chain.json expects " + std::to_string(s.bytes) + " bytes with CRC32C " +
                std::to_string(s.crc32c));
    const auto table_rows = unpack<std::uint32_t>(a[0], T);
    const auto ids = unpack<std::uint64_t>(a[1], n), last = unpack<std::uint64_t>(a[2], n);
    const auto counts = unpack<std::uint32_t>(a[3], n);
    const auto live_rows = unpack<std::uint32_t>(a[6], T);
    const auto live_ids = unpack<std::uint64_t>(a[7], live);
    std::uint64_t sum = 0, live_sum = 0;
    for (std::uint64_t k = 0; k < T; ++k) {
      sum += table_rows[k];
      live_sum += live_rows[k];
      if (table_rows[k] > shape.local_rows || live_rows[k] > shape.local_rows)
        return at("table " + std::to_string(k) + " holds more than the shard's " +
                  std::to_string(shape.local_rows) + " rows");
    }
    if (sum != n || live_sum != live || (s.full && live != 0))
      return at("its tables' rows add up to " + std::to_string(sum) + " saved and " +
                std::to_string(live_sum) + " held, not " + std::to_string(n) + " and " +
                std::to_string(live));
    if (s.full)
      for (auto& m : rows)
        m.clear();
    for (std::uint64_t k = 0, i = 0, j = 0; k < T; ++k) {
      for (std::uint64_t q = 0; q < table_rows[k]; ++q, ++i) {
        auto& e = rows[k][ids[i]];
        e.r = {ids[i], last[i], counts[i]};
        e.values.assign(a[4].begin() + std::ptrdiff_t(i * dim),
                        a[4].begin() + std::ptrdiff_t((i + 1) * dim));
        e.values.insert(e.values.end(), a[5].begin() + std::ptrdiff_t(i * spr),
                        a[5].begin() + std::ptrdiff_t((i + 1) * spr));
      }
      if (s.full)
        continue;
      // Only the ids held at this save stay (the others were evicted).
      const std::unordered_set<std::uint64_t> held(live_ids.begin() + std::ptrdiff_t(j),
                                                   live_ids.begin() +
                                                     std::ptrdiff_t(j + live_rows[k]));
      j += live_rows[k];
      for (auto it = rows[k].begin(); it != rows[k].end();)
        it = held.count(it->first) ? std::next(it) : rows[k].erase(it);
    }
    newest = {std::move(a[8]), std::move(a[9]), std::move(a[10])};
    clock = h.attr("served");
    out->bytes += r.size();
  }
  // Checked: now into the tables, ascending id (the same slots every time).
  const auto stats = unpack<std::uint64_t>(newest[0], T * stats_per_table);
  const auto sketch = unpack<std::uint16_t>(newest[1], T * cells);
  const auto additions = unpack<std::uint64_t>(newest[2], T);
  for (std::uint64_t k = 0; k < T; ++k) {
    auto& tab = t.table(std::size_t(k));
    std::vector<std::uint64_t> ids;
    for (const auto& [id, e] : rows[k])
      ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (const auto id : ids) {
      const auto& e = rows[k].at(id);
      tab.insert_row(e.r, e.values.data(), e.values.data() + dim);
    }
    const std::uint64_t* x = stats.data() + k * stats_per_table;
    tab.set_next_expiry(x[0]);
    tab.mutable_stats() = {x[1], x[2], x[3], x[4], x[5]};
    std::copy_n(sketch.begin() + std::ptrdiff_t(k * cells), cells,
                tab.sketch().counters().begin());
    tab.sketch().set_additions(additions[k]);
  }
  *served = clock;
  out->saves = chain;
  out->newest_at_ns = chain.back().at_ns;
  out->next_seq = chain.back().seq + 1;
  return std::nullopt;
}

} // namespace checkpoint
