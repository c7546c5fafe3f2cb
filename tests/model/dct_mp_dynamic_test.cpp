// dct.mp on dynamic tables (model/dct_mp_dynamic.hpp): a worker's residual
// of a row (its picture of what it owes the row) never outlives the row's
// incarnation: ids without a row are marked absent and keep nothing, a row
// new to a worker is marked fresh (also after eviction and re-admission
// into the same slot), and the marks cross the wire intact.
#include <doctest/doctest.h>

#include <vector>

#include "model/dct_mp.hpp"
#include "model/dct_mp_dynamic.hpp"
#include "model/dynamic_table.hpp"
#include "model/embedding.hpp"

namespace {

using model::dynamic_table;

// The marks of one row (table 0, id) looked up by worker w, as the shard
// makes them.
std::uint8_t look(dynamic_table& tab, model::dct_row_seen& seen, std::uint64_t id,
                  std::uint64_t now, std::size_t w, std::uint32_t* slot = nullptr) {
  const std::uint64_t pair[2] = {0, id};
  const std::uint32_t s = model::tracked_lookup(tab, seen, 0, id, now);
  if (slot)
    *slot = s;
  model::row_marks m;
  model::mark_reply(seen, pair, &s, 1, w, m);
  REQUIRE(m.marked.size() <= 1);
  if (m.marked.empty())
    return 0;
  return (m.marked[0] & 1) ? model::mark_fresh : model::mark_absent;
}

} // namespace

TEST_CASE("dct.mp pictures of dynamic rows across admission, eviction and re-admission") {
  model::dynamic_settings s;
  s.admit_after = 2;
  s.max_rows = 100;
  s.ttl = 80; // sweeps every 10 examples
  dynamic_table tab(s, 2, 1, 1, 0);
  model::dct_row_seen seen(1);
  model::dct_row_residuals res(2, 2); // dim 2, rows named (table, id)
  const std::uint64_t pair[2] = {0, 7};
  const model::sparse_vector nothing{2, {}, {}, false, false}; // a push that sent no entry

  // Id 7's first sight: no row yet. The worker zeroes its gradient, keeps nothing.
  CHECK(look(tab, seen, 7, 0, 0) == model::mark_absent);
  std::uint8_t mark = model::mark_absent;
  float g[2] = {1.0f, -2.0f};
  model::forget_marked(&res, pair, &mark, 1, g, 2);
  CHECK(g[0] == 0.0f);
  CHECK(g[1] == 0.0f);
  CHECK(res.find(pair) == nullptr);

  // Admitted at its second: new to worker 0, whose push keeps its residual.
  std::uint32_t first = dynamic_table::no_row;
  CHECK(look(tab, seen, 7, 1, 0, &first) == model::mark_fresh);
  REQUIRE(first != dynamic_table::no_row);
  float h[2] = {0.5f, -0.25f};
  mark = model::mark_fresh;
  model::forget_marked(&res, pair, &mark, 1, h, 2);
  res.keep_unsent(pair, h, 1, nothing);
  REQUIRE(res.find(pair) != nullptr);
  CHECK(res.find(pair)[0] == 0.5f);

  // Served again: no mark for worker 0 (its residual is of this row); new to worker 1.
  CHECK(look(tab, seen, 7, 2, 0) == 0);
  CHECK(look(tab, seen, 7, 2, 1) == model::mark_fresh);
  CHECK(look(tab, seen, 7, 3, 1) == 0);
  float k[2] = {0.0f, 0.0f};
  mark = 0;
  model::forget_marked(&res, pair, &mark, 1, k, 2);
  res.add_to(pair, k, 1);
  CHECK(k[0] == 0.5f); // the residual goes with the next push of the same row
  CHECK(k[1] == -0.25f);

  // Unseen for more than ttl: evicted. Its count in the sketch admits it
  // again at once, into the slot it left: a fresh row to both workers.
  tab.expire(100);
  CHECK(tab.find(7) == dynamic_table::no_row);
  std::uint32_t again = dynamic_table::no_row;
  CHECK(look(tab, seen, 7, 100, 0, &again) == model::mark_fresh);
  CHECK(again == first); // the same slot: only the admission tells the rows apart
  CHECK(look(tab, seen, 7, 100, 1) == model::mark_fresh);
  mark = model::mark_fresh;
  float z[2] = {0.0f, 0.0f};
  model::forget_marked(&res, pair, &mark, 1, z, 2);
  CHECK(res.find(pair) == nullptr); // the old row's residual is gone
  res.add_to(pair, z, 1);
  CHECK(z[0] == 0.0f);

  // A recovered shard: every row is new to every worker.
  seen.clear();
  CHECK(look(tab, seen, 7, 101, 0) == model::mark_fresh);
}

TEST_CASE("dct_row_seen keeps each worker's bit as more workers come") {
  model::dct_row_seen seen(2);
  CHECK(seen.first_look(1, 5, 3));
  CHECK_FALSE(seen.first_look(1, 5, 3));
  CHECK(seen.first_look(0, 5, 3)); // another table
  CHECK(seen.first_look(1, 5, 200)); // widens to 4 words a slot
  CHECK_FALSE(seen.first_look(1, 5, 3));
  CHECK_FALSE(seen.first_look(0, 5, 3));
  CHECK_FALSE(seen.first_look(1, 5, 200));
  seen.admitted(1, 5);
  CHECK(seen.first_look(1, 5, 3));
  CHECK(seen.first_look(1, 5, 200));
  CHECK_FALSE(seen.first_look(0, 5, 3)); // table 0's slot 5 is another row
}

TEST_CASE("row marks round-trip and malformed marks are refused") {
  model::row_marks m;
  m.absent(0);
  m.fresh(3);
  m.absent(200); // 400: a two-byte varint
  const auto bytes = model::encode_row_marks(m);
  CHECK(bytes.size() == 5); // count, 0, 6 - 1 - 0 = 5, 400 - 7 - 1 = 392 (2 bytes)
  model::row_marks back;
  REQUIRE_FALSE(model::decode_row_marks(bytes.data(), bytes.size(), 201, back));
  CHECK(back.marked == m.marked);
  CHECK(model::decode_row_marks(bytes.data(), bytes.size(), 200, back)); // mark 400 >= 2 x 200
  for (std::size_t len = 0; len < bytes.size(); ++len) // every proper prefix
    CHECK(model::decode_row_marks(bytes.data(), len, 201, back));
  auto longer = bytes;
  longer.push_back(0);
  CHECK(model::decode_row_marks(longer.data(), longer.size(), 201, back)); // trailing byte
  const std::uint8_t padded[] = {1, 0x80, 0x00}; // one mark, 0 as a two-byte varint
  CHECK(model::decode_row_marks(padded, 3, 4, back));
  const std::uint8_t many[] = {9, 0, 0}; // 9 marks in 2 bytes
  CHECK(model::decode_row_marks(many, 3, 100, back));
  const model::row_marks none;
  const auto empty = model::encode_row_marks(none);
  CHECK(empty.size() == 1);
  CHECK_FALSE(model::decode_row_marks(empty.data(), empty.size(), 0, back));
  CHECK(back.marked.empty());
}

TEST_CASE("dct.mp on (table, id) pairs: the same thresholds and dropped rows as row keys") {
  const std::size_t dim = 4, n = 6;
  std::vector<std::uint64_t> keys, pairs;
  std::vector<float> rows;
  for (std::size_t i = 0; i < n; ++i) {
    keys.push_back(model::row_key(i % 2, i));
    pairs.insert(pairs.end(), {i % 2, 1000 + i});
    for (std::size_t j = 0; j < dim; ++j) // row 2 and 5 all zero
      rows.push_back(i == 2 || i == 5 ? 0.0f : float((i + 1) * (j + 1)) * (i % 2 ? -0.01f : 1.0f));
  }
  model::dct_row_thresholds a(2, 0.5, 1, 3), b(2, 0.5, 1, 3);
  model::sparse_vector va, vb;
  a.encode(keys.data(), rows.data(), n, dim, va);
  b.encode(pairs.data(), rows.data(), n, dim, vb, 2);
  CHECK(va.index == vb.index);
  CHECK(va.value == vb.value);
  CHECK(a.tau(0) == b.tau(0));
  CHECK(a.tau(1) == b.tau(1));
  model::drop_empty_rows(keys, va, dim);
  model::drop_empty_rows(pairs, vb, dim, 2);
  REQUIRE(keys.size() * 2 == pairs.size());
  CHECK(va.index == vb.index);
  for (std::size_t r = 0; r < keys.size(); ++r) { // the same rows, in order
    CHECK(model::key_table(keys[r]) == pairs[2 * r]);
    CHECK(model::key_row(keys[r]) + 1000 == pairs[2 * r + 1]);
  }
  CHECK(keys.size() < n);
}

TEST_CASE("dct_row_residuals: a dropped row's floats go to the next new row, cleared") {
  model::dct_row_residuals r(2, 2);
  const std::uint64_t a[2] = {0, 1}, b[2] = {1, 1}; // the same id in two tables
  const model::sparse_vector nothing{2, {}, {}, false, false};
  const float ga[2] = {1.0f, 2.0f}, gb[2] = {3.0f, 4.0f};
  r.keep_unsent(a, ga, 1, nothing);
  r.keep_unsent(b, gb, 1, nothing);
  CHECK(r.rows() == 2);
  CHECK(r.find(a)[1] == 2.0f);
  CHECK(r.find(b)[1] == 4.0f);
  r.drop(a);
  r.drop(a); // twice: nothing
  CHECK(r.rows() == 1);
  const std::uint64_t c[2] = {0, 9};
  const float gc[2] = {5.0f, 6.0f};
  r.keep_unsent(c, gc, 1, nothing);
  CHECK(r.find(c)[0] == 5.0f);
  CHECK(r.find(b)[0] == 3.0f);
  CHECK(r.find(a) == nullptr);
}

TEST_CASE("dct_row_residuals with a capacity: at most that many rows after each push, the "
          "rows used lately kept, a long run's map bounded") {
  const std::size_t dim = 2, cap = 4;
  model::dct_row_residuals r(dim, 2);
  r.set_capacity(cap);
  const model::sparse_vector nothing{2, {}, {}, false, false};
  const float g[dim] = {1.0f, 1.0f};
  auto push = [&](std::uint64_t id) {
    const std::uint64_t key[2] = {0, id};
    float work[dim] = {g[0], g[1]};
    model::sparse_vector out;
    model::dct_row_thresholds tau(1, 0.5, 1, 7);
    model::threshold_row_push(tau, &r, key, work, 1, dim, false, out, 2);
  };
  // A stream of ids seen once each (as ids a dynamic table evicts and never
  // sees again), with id 1 pushed between every two of them.
  for (std::uint64_t id = 100; id < 1100; ++id) {
    push(id);
    push(1);
    CHECK(r.rows() <= cap);
  }
  const std::uint64_t one[2] = {0, 1}, last[2] = {0, 1099}, first[2] = {0, 100};
  CHECK(r.find(one) != nullptr);  // used at every other push: kept
  CHECK(r.find(last) != nullptr); // just kept
  CHECK(r.find(first) == nullptr); // long gone
  CHECK(r.evictions() >= 1000 - cap);
  // Without a bound the same stream keeps every row.
  model::dct_row_residuals all(dim, 2);
  for (std::uint64_t id = 100; id < 1100; ++id) {
    const std::uint64_t key[2] = {0, id};
    all.keep_unsent(key, g, 1, nothing);
  }
  CHECK(all.rows() == 1000);
  // One batch wider than the bound keeps its own rows until its push ends,
  // then trims: no row of it is written after its slot was reused.
  model::dct_row_residuals wide(dim, 2);
  wide.set_capacity(2);
  std::vector<std::uint64_t> keys;
  std::vector<float> grads;
  for (std::uint64_t id = 0; id < 6; ++id) {
    keys.insert(keys.end(), {0, id});
    grads.insert(grads.end(), {float(id), float(id)});
  }
  model::sparse_vector out6;
  model::dct_row_thresholds tau6(1, 0.01, 1, 7);
  auto work = grads;
  model::threshold_row_push(tau6, &wide, keys.data(), work.data(), 6, dim, false, out6, 2);
  CHECK(wide.rows() == 2);
  for (std::uint64_t id = 0; id < 6; ++id) {
    const std::uint64_t key[2] = {0, id};
    if (const float* x = wide.find(key)) // its own row's residual: unsent g, or 0 where sent
      for (std::size_t j = 0; j < dim; ++j)
        CHECK((x[j] == float(id) || x[j] == 0.0f));
  }
}
