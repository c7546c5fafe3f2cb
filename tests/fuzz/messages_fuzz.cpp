// Decoding what a peer sends: arbitrary bytes through CAF's binary
// deserializer, as BASP does, into a caf::message (any registered type, by
// name) and, chosen by the first byte, into each registered type directly.
// Properties: no crash, no huge allocation from a short input (raw blobs
// check their length against the bytes left), and whatever decodes encodes
// back to bytes that decode to an equal value.
//
// One limit is CAF's, not ours: CAF 0.17.6 decodes its built-in byte
// sequences (std::vector<char>, type '@charbuf', which any caf::message may
// name, nested in '@message' or '@error' too) by resizing to the claimed
// length, up to 4 GiB, before checking that the bytes exist
// (data_processor::apply_sequence). No shadowsync message has such a field,
// and only a peer past the mutual-TLS handshake (or a local process, with
// deploy.insecure on loopback) can send one; README's Security section says
// so. The caf::message path below therefore skips inputs that name
// '@charbuf', so that it fuzzes our registered types inside messages rather
// than re-finding that CAF limit (tests/fuzz/corpus/messages/caf-charbuf-4gib
// is the input that found it; the typed paths still decode it).
//
// What decodes as a message whose ids key state at its receiver (sparse_range,
// ring_chunk, ring_sparse, and a re-form's numbers taken from them) then goes
// through the handlers' checks against a plan (messages/peer_bounds.hpp):
// what they accept must be within that plan, and they must not trip on any
// value (2^32 - 1 generations, 2^64 - 1 offsets).
#include <algorithm>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "messages/peer_bounds.hpp"
#include "messages/registry.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

// One actor system for the whole run, never destroyed: destroying it from an
// exit handler races CAF's own static state (heap corruption at exit).
caf::actor_system& sys() {
  static caf::actor_system* s = [] {
    auto* cfg = new caf::actor_system_config;
    messages::register_messages(*cfg);
    cfg->set("scheduler.max-threads", 1);
    return new caf::actor_system(*cfg);
  }();
  return *s;
}

// True when the input names CAF's built-in std::vector<char> anywhere: a
// caf::message names each element's type as a string ("@<>+@charbuf"), also
// when nested in '@message' or '@error', so the name is in the bytes.
bool names_charbuf(const char* data, std::size_t size) {
  static const std::string name = "@charbuf";
  return std::search(data, data + size, name.begin(), name.end()) != data + size;
}

// The plan the checks hold decoded values to: 4 trainers, a dense shard at
// offset 64.
constexpr std::uint32_t plan_trainers = 4;
constexpr std::uint64_t plan_offset = 64;

template <class T>
void check_bounds(const T&) {}

void check_bounds(const messages::file_chunk& x) {
  // As the coordinator checks the first piece of embedding-0.bin it asked for.
  const bool ok = messages::check_file_chunk(x, "embedding-0.bin", 0, 0).empty();
  FUZZ_CHECK(ok == (x.name == "embedding-0.bin" && x.offset == 0 && !x.bytes.values.empty() &&
                    x.bytes.size() <= x.size));
}

void check_bounds(const messages::sparse_range& x) {
  const bool ok = messages::check_sparse_range(x, plan_offset, plan_trainers).empty();
  FUZZ_CHECK(ok == (x.offset == plan_offset && x.trainer < plan_trainers));
}

void check_bounds(const messages::ring_chunk& x) {
  const bool ok = messages::check_ring_message(x, plan_trainers).empty();
  FUZZ_CHECK(ok == (x.generation < plan_trainers && x.step < 2 * (plan_trainers - 1) &&
                    x.chunk < plan_trainers));
  // A re-form with these numbers: generation, rank, survivors.
  const bool reform = messages::check_reform(x.generation, x.step, x.chunk, plan_trainers).empty();
  FUZZ_CHECK(reform == (x.generation < plan_trainers && x.chunk <= plan_trainers && x.step < x.chunk));
}

void check_bounds(const messages::ring_sparse& x) {
  const bool ok = messages::check_ring_message(x, plan_trainers).empty();
  // The gather sends step 0; the reduce's steps are below 2 (trainers - 1).
  const std::uint64_t steps = std::max<std::uint64_t>(2 * (std::uint64_t{plan_trainers} - 1), 1);
  FUZZ_CHECK(ok == (x.generation < plan_trainers && x.origin < plan_trainers && x.step < steps));
}

template <class T>
void decode_as(const char* data, std::size_t size) {
  T x;
  caf::binary_deserializer source{sys(), data, size};
  if (source(x))
    return;
  check_bounds(x);
  std::vector<char> buf;
  caf::binary_serializer sink{sys(), buf};
  FUZZ_CHECK(!sink(x));
  T y;
  caf::binary_deserializer again{sys(), buf};
  FUZZ_CHECK(!again(y));
  FUZZ_CHECK(x == y || !(x == x)); // NaN payloads compare unequal to themselves
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 1)
    return 0;
  const auto* data = reinterpret_cast<const char*>(bytes) + 1;
  const std::size_t n = size - 1;
  {
    caf::message msg;
    caf::binary_deserializer source{sys(), data, n};
    if (!names_charbuf(data, n) && !source(msg)) {
      std::vector<char> buf;
      caf::binary_serializer sink{sys(), buf};
      FUZZ_CHECK(!sink(msg));
    }
  }
  using namespace messages;
  switch (bytes[0] % 20) {
    case 0: decode_as<lookup_request>(data, n); break;
    case 1: decode_as<embedding_rows>(data, n); break;
    case 2: decode_as<embedding_grads>(data, n); break;
    case 3: decode_as<dense_range>(data, n); break;
    case 4: decode_as<ring_chunk>(data, n); break;
    case 5: decode_as<example_batch>(data, n); break;
    case 6: decode_as<worker_stats>(data, n); break;
    case 7: decode_as<sync_stats>(data, n); break;
    case 8: decode_as<trainer_report>(data, n); break;
    case 9: decode_as<progress_report>(data, n); break;
    case 10: decode_as<float_blob>(data, n); break;
    case 11: decode_as<key_blob>(data, n); break;
    case 12: decode_as<node_hello>(data, n); break;
    case 13: decode_as<node_roster>(data, n); break;
    case 14: decode_as<role_plan>(data, n); break;
    case 15: decode_as<sparse_rows>(data, n); break;
    case 16: decode_as<sparse_grads>(data, n); break;
    case 17: decode_as<ring_sparse>(data, n); break;
    case 18: decode_as<sparse_range>(data, n); break;
    default: // (one case for both keeps the corpus' first bytes meaning what they meant)
      decode_as<spawned_roles>(data, n);
      decode_as<file_chunk>(data, n);
      break;
  }
  return 0;
}
