// Every message type survives serialize -> deserialize with CAF's binary
// serializer, i.e. the path a remote message takes. Float and key payloads
// must take the raw-blob path, so their encoded size is checked too.
#include <cmath>
#include <limits>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <doctest/doctest.h>

#include "messages/registry.hpp"

namespace {

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  fixture() {
    messages::register_messages(cfg);
    cfg.set("scheduler.max-threads", 1);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  template <class T>
  std::vector<char> encode(T x) {
    std::vector<char> buf;
    caf::binary_serializer sink{*sys, buf};
    REQUIRE_FALSE(sink(x));
    return buf;
  }

  // A whole message (atoms and payload) as BASP carries it, and back.
  caf::message wire(const caf::message& m) {
    caf::message back;
    const auto buf = encode(m);
    caf::binary_deserializer source{*sys, buf};
    REQUIRE_FALSE(source(back));
    return back;
  }

  template <class T>
  // compare_message = false: x holds NaN, which equals nothing.
  T roundtrip(T x, std::size_t* bytes = nullptr, bool compare_message = true) {
    auto buf = encode(x);
    if (bytes)
      *bytes = buf.size();
    T y;
    caf::binary_deserializer source{*sys, buf};
    REQUIRE_FALSE(source(y));
    // A message's own round trip, as BASP does it.
    auto msg = caf::make_message(x);
    std::vector<char> mbuf;
    caf::binary_serializer msink{*sys, mbuf};
    REQUIRE_FALSE(msink(msg));
    caf::message back;
    caf::binary_deserializer msource{*sys, mbuf};
    REQUIRE_FALSE(msource(back));
    REQUIRE(back.match_elements<T>());
    if (compare_message)
      CHECK(back.get_as<T>(0) == x);
    return y;
  }
};

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = 0.5f * float(i) - 3.0f;
  return v;
}

} // namespace

TEST_CASE_FIXTURE(fixture, "raw blobs encode as length + bytes") {
  std::size_t bytes = 0;
  messages::float_blob f{ramp(1000)};
  CHECK(roundtrip(f, &bytes) == f);
  CHECK(bytes == 8 + 4000); // uint64 count + 1000 raw floats
  messages::key_blob k{std::vector<std::uint64_t>{1, 2, std::uint64_t(-1)}};
  CHECK(roundtrip(k, &bytes) == k);
  CHECK(bytes == 8 + 24);
  messages::float_blob empty;
  CHECK(roundtrip(empty).values.empty());
}

TEST_CASE_FIXTURE(fixture, "a corrupt blob length is rejected, not allocated") {
  std::vector<char> buf;
  caf::binary_serializer sink{*sys, buf};
  std::uint64_t huge = std::uint64_t{1} << 62;
  REQUIRE_FALSE(sink(huge));
  messages::float_blob y;
  caf::binary_deserializer source{*sys, buf};
  CHECK(source(y)); // an error
}

TEST_CASE_FIXTURE(fixture, "every message struct round-trips") {
  messages::lookup_request lr;
  lr.batch = 7;
  lr.keys.values = {3, 1ull << 41, 99};
  CHECK(roundtrip(lr) == lr);
  messages::embedding_rows er;
  er.batch = 7;
  er.rows.values = ramp(48);
  CHECK(roundtrip(er) == er);
  messages::embedding_grads eg;
  eg.keys.values = {5, 6};
  eg.grads.values = ramp(32);
  CHECK(roundtrip(eg) == eg);
  messages::sparse_rows sr;
  sr.batch = 9;
  sr.refreshes = 3;
  sr.payload.values = {1, 2, 3, 250};
  CHECK(roundtrip(sr) == sr);
  sr.marks.values = {2, 0, 5}; // dynamic tables: two row marks
  CHECK(roundtrip(sr) == sr);
  messages::sparse_grads sg;
  sg.keys.values = {5, 1ull << 42};
  sg.payload.values = {0, 7, 7};
  CHECK(roundtrip(sg) == sg);
  sg.keys.values.clear(); // rows named by their place in batch 12's lookup
  sg.batch = 12;
  sg.rows = messages::rows_placed;
  CHECK(roundtrip(sg) == sg);
  messages::dense_range dr;
  dr.offset = 1234;
  dr.values.values = ramp(100);
  CHECK(roundtrip(dr) == dr);
  messages::ring_chunk rc;
  rc.generation = 2;
  rc.round = 3;
  rc.step = 2;
  rc.chunk = 1;
  rc.values.values = ramp(10);
  CHECK(roundtrip(rc) == rc);
  messages::example_batch eb;
  eb.seq = 4;
  eb.num_dense = 2;
  eb.num_cat = 1;
  eb.labels.values = {1, 0};
  eb.dense.values = {0.5f, 1.5f, 2.5f, 3.5f};
  eb.cat.values = {11, 22};
  eb.malformed = 3;
  CHECK(roundtrip(eb) == eb);
  messages::worker_stats ws;
  ws.examples = 10;
  ws.loss_sum = 6.9;
  ws.blocked_seconds = 0.25;
  ws.push_bytes = 77;
  ws.malformed_lines = 2;
  ws.cpu_seconds = 0.125;
  ws.dense_step_cpu_seconds = 0.0625;
  ws.thread_moves = 3;
  ws.mp_rows_sent = 11;
  ws.mp_grads_of = 1ull << 40;
  ws.mp_refreshes = 4;
  CHECK(roundtrip(ws) == ws);
  messages::sync_stats ss;
  ss.rounds = 3;
  ss.batches_at_round = {4, 9, 15};
  CHECK(roundtrip(ss) == ss);
  messages::trainer_report tr;
  tr.trainer = 2;
  tr.work = ws;
  tr.sync = ss;
  tr.replica.values = ramp(20);
  CHECK(roundtrip(tr) == tr);
  messages::progress_report pr;
  pr.examples = 100;
  pr.loss_sum = 1.5;
  pr.sync_rounds = 9;
  pr.worker_seconds = 4.25;
  pr.blocked_seconds = 0.5;
  pr.lookup_bytes = 123456789012ull; // > 2^32: all 64 bits travel
  pr.push_bytes = 5;
  pr.sync_bytes = 77;
  pr.read_bytes = 9000;
  pr.dct_sync_bytes = 70;
  pr.dct_embedding_bytes = 3;
  pr.shard_lookup_bytes = {123456789000ull, 12};
  pr.shard_push_bytes = {2, 3};
  pr.trainers = {{3, 100, 9}};
  CHECK(roundtrip(pr) == pr);
  auto other = pr;
  other.sync_bytes = 78; // operator== sees the new fields
  CHECK_FALSE(other == pr);
  other = pr;
  other.trainers[0].sync_rounds = 8;
  CHECK_FALSE(other == pr);
  other = pr;
  other.shard_push_bytes[1] = 4;
  CHECK_FALSE(other == pr);
}

TEST_CASE_FIXTURE(fixture, "errors of the project's category render with their name") {
  auto err = messages::make_error(messages::errc::shard_down, "embedding-shard-1");
  auto text = sys->render(err);
  CHECK(text.find("shard_down") != std::string::npos);
  CHECK(text.find("embedding-shard-1") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture, "the multi-node messages round-trip") {
  messages::node_hello h;
  h.node = "t1";
  h.heartbeat_ms = 1000;
  h.connection_timeout_ms = 5000;
  h.spec_digest = "0123abcd";
  CHECK(roundtrip(h) == h);
  messages::node_roster r;
  r.nodes = {"coord", "t0"};
  r.agents = {nullptr, nullptr};
  r.ready = {1, 0};
  CHECK(roundtrip(r) == r);
  messages::role_plan p;
  p.config_ini = "[cluster]\ntrainers = 2\n";
  p.embedding_shards = {0, 2};
  p.trainers = {1};
  p.shards = {nullptr, nullptr, nullptr};
  CHECK(roundtrip(p) == p);
  messages::spawned_roles s;
  s.trainers = {nullptr};
  CHECK(roundtrip(s) == s);
  // The ring's member list is a message element of its own (peers_atom); CAF
  // registers std::vector<strong_actor_ptr> itself.
  std::vector<caf::strong_actor_ptr> members{nullptr, nullptr};
  CHECK(roundtrip(members) == members);
}

TEST_CASE("error_text: the context string, else the code's name, on any error") {
  using messages::errc;
  CHECK(messages::error_text(messages::make_error(errc::input_error, "no such file x.tsv")) ==
        "no such file x.tsv");
  // An empty context (make_error without text) is safe and names the code.
  CHECK(messages::error_text(messages::make_error(errc::input_error)) ==
        messages::to_string(errc::input_error));
  CHECK(messages::error_text(caf::error{}) == "no error");
  CHECK(messages::error_text(caf::make_error(caf::sec::request_timeout)) == "error " +
        std::to_string(int(caf::sec::request_timeout)));
}

TEST_CASE_FIXTURE(fixture, "raw blob: a length beyond the received bytes is refused before allocating") {
  // 8 bytes that announce 2^30 floats (4 GiB): refused, nothing allocated.
  auto buf = encode(std::uint64_t{1} << 30);
  messages::float_blob b;
  caf::binary_deserializer source{*sys, buf};
  auto err = source(b);
  REQUIRE(err);
  CHECK(err == caf::sec::end_of_stream);
  CHECK(b.values.empty());
  // A length that fits what follows still decodes.
  auto good = encode(messages::float_blob{std::vector<float>{1.5f, -2.0f}});
  messages::float_blob c;
  caf::binary_deserializer ok{*sys, good};
  REQUIRE_FALSE(ok(c));
  CHECK(c.values == std::vector<float>{1.5f, -2.0f});
}

TEST_CASE_FIXTURE(fixture, "doubles cross the wire bit-exact, infinities and subnormals included") {
  // CAF 0.17.6's own float encoding spins forever on +-inf and turns
  // subnormals and NaN into other numbers; messages send the bit pattern.
  messages::progress_report p;
  p.loss_sum = std::numeric_limits<double>::infinity();
  p.prob_sum = -std::numeric_limits<double>::infinity();
  p.worker_seconds = std::numeric_limits<double>::denorm_min();
  p.blocked_seconds = 1e-310; // subnormal
  auto back = roundtrip(p);
  CHECK(back == p);
  messages::worker_stats w;
  w.loss_sum = std::numeric_limits<double>::quiet_NaN();
  w.cpu_seconds = 1e-320;
  auto wb = roundtrip(w, nullptr, false);
  CHECK(std::isnan(wb.loss_sum));
  CHECK(wb.cpu_seconds == 1e-320);
}

TEST_CASE_FIXTURE(fixture, "dynamic tables' messages cross the wire whole (multi-node)") {
  // As BASP carries them: the atoms with the payload in one message. Keys
  // are (table, id) pairs; an id is any 64-bit hash, the top bit included.
  messages::lookup_request lr;
  lr.batch = 12;
  lr.keys.values = {3, 0xFEDCBA9876543210ull, 25, 1};
  auto m = wire(caf::make_message(messages::lookup_atom::value, lr));
  REQUIRE((m.match_elements<messages::lookup_atom, messages::lookup_request>()));
  CHECK(m.get_as<messages::lookup_request>(1) == lr);
  m = wire(caf::make_message(messages::lookup_atom::value, messages::sparse_atom::value, lr));
  REQUIRE((m.match_elements<messages::lookup_atom, messages::sparse_atom,
                            messages::lookup_request>()));
  CHECK(m.get_as<messages::lookup_request>(2) == lr);
  // The coordinator's requests after training: counters, then every row.
  m = wire(caf::make_message(messages::stats_atom::value, messages::ids_atom::value));
  CHECK((m.match_elements<messages::stats_atom, messages::ids_atom>()));
  m = wire(caf::make_message(messages::dump_atom::value, messages::ids_atom::value));
  CHECK((m.match_elements<messages::dump_atom, messages::ids_atom>()));
  // Their replies: the rows by (table, id), and 26 tables' rows + 6 counters.
  messages::embedding_grads rows;
  rows.keys.values = {0, 0xFFFFFFFFFFFFFFFFull, 25, 7};
  rows.grads.values = ramp(32);
  m = wire(caf::make_message(rows));
  REQUIRE(m.match_elements<messages::embedding_grads>());
  CHECK(m.get_as<messages::embedding_grads>(0) == rows);
  messages::key_blob counters;
  for (std::uint64_t i = 0; i < 32; ++i)
    counters.values.push_back(i * 1000003);
  m = wire(caf::make_message(counters));
  REQUIRE(m.match_elements<messages::key_blob>());
  CHECK(m.get_as<messages::key_blob>(0) == counters);
}

TEST_CASE_FIXTURE(fixture, "a shard's model file crosses the wire in pieces (multi-node export)") {
  // The coordinator's request (save, offset) and the shard's piece of its file.
  const std::uint64_t offset = (std::uint64_t{1} << 33) + 5; // past 4 GiB: all 64 bits travel
  auto m = wire(caf::make_message(messages::save_atom::value, offset));
  REQUIRE((m.match_elements<messages::save_atom, std::uint64_t>()));
  CHECK(m.get_as<std::uint64_t>(1) == offset);
  messages::file_chunk c;
  c.name = "dynamic-3.bin";
  c.size = offset + 300;
  c.offset = offset;
  c.crc32c = 0xE3069283u;
  for (int i = 0; i < 300; ++i)
    c.bytes.values.push_back(std::uint8_t(i * 7));
  std::size_t bytes = 0;
  CHECK(roundtrip(c, &bytes) == c);
  CHECK(bytes < 300 + 64); // the bytes as one raw blob, not element by element
  auto other = c;
  other.crc32c ^= 1; // operator== sees every field
  CHECK_FALSE(other == c);
  other = c;
  other.bytes.values[299] ^= 1;
  CHECK_FALSE(other == c);
}
