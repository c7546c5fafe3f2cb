#include "checkpoint/dynamic_files.hpp"

#include <algorithm>
#include <cstring>

#include "checkpoint/array_file.hpp"
#include "checkpoint/packed_words.hpp"
#include "model/shard_layout.hpp"

namespace checkpoint {

namespace {

constexpr std::size_t stats_per_table = 6;

} // namespace

std::uint64_t dynamic_owner(std::uint64_t id, std::uint64_t num_shards) {
  return model::id_owner(id, num_shards);
}

std::string dynamic_file_name(std::uint64_t shard) {
  return "dynamic-" + std::to_string(shard) + ".bin";
}

shard_counters counters_of(const model::dynamic_tables& t, std::uint64_t s,
                           std::uint64_t num_shards) {
  const auto& sk = t.table(0).sketch();
  shard_counters k{s, num_shards, sk.width(), sk.depth(), {}, {}, {}};
  for (std::size_t i = 0; i < t.num_tables(); ++i) {
    const auto& tab = t.table(i);
    const auto& x = tab.stats();
    k.stats.insert(k.stats.end(), {tab.next_expiry(), x.admissions, x.evictions, x.expired,
                                   x.lookups, x.missing});
    const auto& c = tab.sketch().counters();
    k.sketch.insert(k.sketch.end(), c.begin(), c.end());
    k.additions.push_back(tab.sketch().additions());
  }
  return k;
}

std::optional<std::string> set_counters(model::dynamic_tables& t, const shard_counters& k) {
  const std::size_t T = t.num_tables();
  const auto& sk = t.table(0).sketch();
  const std::size_t cells = std::size_t(k.width * k.depth);
  if (k.width != sk.width() || k.depth != sk.depth() || k.stats.size() != stats_per_table * T ||
      k.sketch.size() != cells * T || k.additions.size() != T)
    return "the saved admission sketches are " + std::to_string(k.width) + " x " +
           std::to_string(k.depth) + " for " + std::to_string(k.additions.size()) +
           " tables, these tables' " + std::to_string(sk.width()) + " x " +
           std::to_string(sk.depth()) + " for " + std::to_string(T) +
           " (embedding.max-rows or embedding.admit-after differ from the saved run's)";
  for (std::size_t i = 0; i < T; ++i) {
    auto& tab = t.table(i);
    const std::uint64_t* x = k.stats.data() + stats_per_table * i;
    tab.set_next_expiry(std::max(tab.next_expiry(), x[0]));
    tab.mutable_stats() = model::dynamic_stats{x[1], x[2], x[3], x[4], x[5]};
    std::copy(k.sketch.begin() + std::ptrdiff_t(i * cells),
              k.sketch.begin() + std::ptrdiff_t((i + 1) * cells),
              tab.sketch().counters().begin());
    tab.sketch().set_additions(k.additions[i]);
  }
  return std::nullopt;
}

namespace {

// The header and arrays of dynamic-S.bin (see the header for the layout).
void dynamic_content(const model::dynamic_tables& t, std::uint64_t s, std::uint64_t num_shards,
                     dynamic_counters kind, file_header& h,
                     std::vector<std::vector<float>>& arrays) {
  const bool counters = kind != dynamic_counters::none;
  const std::size_t T = t.num_tables(), dim = t.dim(), spr = t.state_per_row();
  const auto& sk = t.table(0).sketch();
  std::vector<std::uint32_t> table_rows(T, 0), counts;
  std::vector<std::uint64_t> ids, last, stats;
  std::vector<float> weights, state;
  std::vector<std::uint16_t> sketch;
  std::vector<std::uint64_t> additions;
  for (std::size_t k = 0; k < T; ++k) {
    const auto& tab = t.table(k);
    for (const auto& r : tab.saved_rows()) {
      if (dynamic_owner(r.id, num_shards) != s)
        continue;
      ++table_rows[k];
      ids.push_back(r.id);
      last.push_back(r.last);
      counts.push_back(r.count);
      const std::uint32_t slot = tab.slot_of(r.id);
      weights.insert(weights.end(), tab.row(slot), tab.row(slot) + dim);
      const float* acc = tab.accumulator(slot);
      state.insert(state.end(), acc, acc + spr);
    }
  }
  if (counters) { // the run's counters and sketches
    auto k = counters_of(t, s, num_shards);
    stats = std::move(k.stats);
    sketch = std::move(k.sketch);
    additions = std::move(k.additions);
  }
  const std::uint64_t n = ids.size();
  h = file_header{};
  h.kind = "dynamic";
  h.attrs = {{"tables", T},         {"dim", dim},
             {"state_per_row", spr}, {"max_rows", t.settings().max_rows},
             {"shard", s},           {"num_shards", num_shards},
             {"rows", n},            {"sketch_width", counters ? sk.width() : 0},
             {"sketch_depth", counters ? sk.depth() : 0}};
  if (kind == dynamic_counters::own_shard)
    h.attrs["own_shard"] = 1;
  arrays = {pack(table_rows), pack(ids),   pack(last),     pack(counts), std::move(weights),
            std::move(state), pack(stats), pack(sketch), pack(additions)};
  const char* names[] = {"table_rows", "ids",    "last",   "counts",   "weights",
                         "state",      "tables", "sketch", "additions"};
  for (std::size_t i = 0; i < arrays.size(); ++i)
    h.arrays.push_back({names[i], arrays[i].size()});
}

} // namespace

bool write_dynamic_file(const std::string& path, const model::dynamic_tables& t,
                        std::uint64_t s, std::uint64_t num_shards,
                        dynamic_counters counters, file_info* info, std::string* err) {
  file_header h;
  std::vector<std::vector<float>> arrays;
  dynamic_content(t, s, num_shards, counters, h, arrays);
  std::vector<const float*> data;
  for (const auto& a : arrays)
    data.push_back(a.data());
  info->name = dynamic_file_name(s);
  return write_array_file(path, h, data, info, err);
}

file_image dynamic_image(const model::dynamic_tables& t, std::uint64_t s,
                         std::uint64_t num_shards, dynamic_counters counters) {
  file_header h;
  std::vector<std::vector<float>> arrays;
  dynamic_content(t, s, num_shards, counters, h, arrays);
  return file_image(dynamic_file_name(s), h, std::move(arrays));
}

bool write_dynamic_tables(folder_writer& w, const model::dynamic_tables& t,
                          std::uint64_t num_shards, std::string* err) {
  for (std::uint64_t s = 0; s < num_shards; ++s) {
    file_info info;
    if (!write_dynamic_file(w.path(dynamic_file_name(s)), t, s, num_shards,
                            s == 0 ? dynamic_counters::model : dynamic_counters::none, &info,
                            err))
      return false;
    w.add(info);
  }
  return true;
}

std::optional<std::string> load_dynamic_tables(const opened_checkpoint& c,
                                               model::dynamic_tables& t,
                                               std::vector<shard_counters>* own) {
  const std::uint64_t T = t.num_tables(), dim = t.dim(), spr = t.state_per_row();
  const auto& sk = t.table(0).sketch();
  std::size_t files = 0;
  std::string err;
  for (const auto& f : c.m.files) {
    if (f.name.rfind("dynamic-", 0) != 0)
      continue;
    ++files;
    array_file_reader r;
    if (!r.open(c.file(f.name), "dynamic", &err))
      return err;
    const auto& h = r.header();
    auto mismatch = [&](const char* what, std::uint64_t got, std::uint64_t want) {
      return "'" + r.path() + "': " + what + " " + std::to_string(got) + ", the model has " +
             std::to_string(want);
    };
    if (h.attr("tables") != T)
      return mismatch("tables", h.attr("tables"), T);
    if (h.attr("dim") != dim)
      return mismatch("dim", h.attr("dim"), dim);
    if (h.attr("state_per_row") != spr)
      return mismatch("optimiser state per row", h.attr("state_per_row"), spr);
    const std::uint64_t width = h.attr("sketch_width"), depth = h.attr("sketch_depth");
    const bool own_shard = h.attr("own_shard") == 1; // sized by the shard's share
    if (own_shard && width &&
        (width < 64 || width > (1u << 26) || (width & (width - 1)) != 0 || depth < 1 || depth > 8))
      return "'" + r.path() + "': admission sketch " + std::to_string(width) + " x " +
             std::to_string(depth) + ", expected a width of 64 to 2^26 (a power of two) and a "
             "depth of 1 to 8";
    if (width && !own_shard && (width != sk.width() || depth != sk.depth()))
      return mismatch("admission sketch width", width, sk.width()) +
             " (embedding.max-rows and embedding.admit-after size it: use the saved run's)";
    const std::uint64_t n = h.attr("rows"), ns = width ? T : 0;
    const std::vector<array_spec> want{{"table_rows", slots<std::uint32_t>(T)},
                                       {"ids", slots<std::uint64_t>(n)},
                                       {"last", slots<std::uint64_t>(n)},
                                       {"counts", slots<std::uint32_t>(n)},
                                       {"weights", n * dim},
                                       {"state", n * spr},
                                       {"tables", slots<std::uint64_t>(ns * stats_per_table)},
                                       {"sketch", slots<std::uint16_t>(ns * width * depth)},
                                       {"additions", slots<std::uint64_t>(ns)}};
    if (!r.expect_arrays(want, "the dynamic tables", &err))
      return err;
    std::vector<std::vector<float>> a;
    if (!r.read_all(want, &a, &err))
      return err;
    std::uint32_t crc = 0;
    if (!r.finish(&crc, &err))
      return err;
    if (auto e = check_crc(c, f.name, crc))
      return e;
    const auto table_rows = unpack<std::uint32_t>(a[0], T);
    const auto ids = unpack<std::uint64_t>(a[1], n), last = unpack<std::uint64_t>(a[2], n);
    const auto counts = unpack<std::uint32_t>(a[3], n);
    std::uint64_t sum = 0;
    for (const auto x : table_rows)
      sum += x;
    if (sum != n)
      return "'" + r.path() + "': its tables' rows add up to " + std::to_string(sum) + ", not " +
             std::to_string(n);
    for (std::uint64_t k = 0, i = 0; k < T; ++k) {
      auto& tab = t.table(std::size_t(k));
      for (std::uint64_t j = 0; j < table_rows[k]; ++j, ++i) {
        if (tab.rows() >= t.settings().max_rows)
          return "'" + r.path() + "': table " + std::to_string(k) + " holds more rows than " +
                 "embedding.max-rows = " + std::to_string(t.settings().max_rows);
        if (tab.find(ids[i]) != model::dynamic_table::no_row)
          return "'" + r.path() + "': id " + std::to_string(ids[i]) + " of table " +
                 std::to_string(k) + " appears twice";
        tab.insert_row({ids[i], last[i], counts[i]}, a[4].data() + i * dim,
                       a[5].data() + i * spr);
      }
      if (!ns || own_shard)
        continue;
      const auto stats = unpack<std::uint64_t>(a[6], ns * stats_per_table);
      const std::uint64_t* x = stats.data() + k * stats_per_table;
      tab.set_next_expiry(std::max(tab.next_expiry(), x[0]));
      auto& st = tab.mutable_stats();
      st.admissions += x[1];
      st.evictions += x[2];
      st.expired += x[3];
      st.lookups += x[4];
      st.missing += x[5];
      const auto counters = unpack<std::uint16_t>(a[7], ns * width * depth);
      auto& mine = tab.sketch().counters();
      for (std::size_t q = 0; q < mine.size(); ++q)
        mine[q] = std::uint16_t(std::min<std::uint32_t>(
          0xFFFFu, std::uint32_t(mine[q]) + counters[std::size_t(k) * mine.size() + q]));
      tab.sketch().set_additions(tab.sketch().additions() + unpack<std::uint64_t>(a[8], ns)[k]);
    }
    if (ns && own_shard && own)
      own->push_back({h.attr("shard"), h.attr("num_shards"), width, depth,
                      unpack<std::uint64_t>(a[6], ns * stats_per_table),
                      unpack<std::uint16_t>(a[7], ns * width * depth),
                      unpack<std::uint64_t>(a[8], ns)});
  }
  if (files == 0)
    return "'" + c.folder + "' has no dynamic table file (dynamic-0.bin): a checkpoint of "
                            "hashed tables? (model.embedding must be the saved run's)";
  return std::nullopt;
}

} // namespace checkpoint
