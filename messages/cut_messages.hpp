#pragma once
// Messages of the checkpoint cut of the running simulated cluster
// (cluster/cluster_cut.hpp describes the protocol) and of a multi-node
// export's shard files. Part of the wire format
// like messages.hpp; registered in registry.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>

#include "messages/blobs.hpp"
#include "messages/messages.hpp"

namespace messages {

using cut_atom = caf::atom_constant<caf::atom("cut")>;       // take part in cut N
using hold_atom = caf::atom_constant<caf::atom("hold")>;     // syncer: no new round
using resume_atom = caf::atom_constant<caf::atom("resume")>; // go on after a cut
using parked_atom = caf::atom_constant<caf::atom("parked")>; // worker: drained, waiting
using where_atom = caf::atom_constant<caf::atom("where")>;   // reader: its position
using aim_atom = caf::atom_constant<caf::atom("aim")>;       // syncer: the round to hold at
using workers_atom = caf::atom_constant<caf::atom("workers")>; // trainer: its workers' handles

// A reader's position: what a resumed reader skips to.
struct reader_mark {
  std::uint64_t epoch = 0;     // passes completed
  std::uint64_t examples = 0;  // examples served in the current pass
  std::uint64_t lines = 0;     // data lines consumed in the current pass
  std::uint64_t malformed = 0; // malformed lines skipped, all passes so far
  std::uint64_t served = 0;    // examples served, all passes
  std::uint64_t cut_bags = 0;  // bags cut to data.max-ids, all passes so far
  friend bool operator==(const reader_mark& a, const reader_mark& b) {
    return a.epoch == b.epoch && a.examples == b.examples && a.lines == b.lines &&
           a.malformed == b.malformed && a.served == b.served && a.cut_bags == b.cut_bags;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, reader_mark& x) {
  return f(caf::meta::type_name("reader_mark"), x.epoch, x.examples, x.lines, x.malformed,
           x.served, x.cut_bags);
}

// A held syncer's state: rounds completed and, for BMUF, its block state
// (w_g and Delta; empty for the other methods).
struct sync_hold {
  std::uint64_t rounds = 0;
  float_blob global, momentum;
  friend bool operator==(const sync_hold& a, const sync_hold& b) {
    return a.rounds == b.rounds && a.global == b.global && a.momentum == b.momentum;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sync_hold& x) {
  return f(caf::meta::type_name("sync_hold"), x.rounds, x.global, x.momentum);
}

// One trainer's part of a cut: its replica and dense optimiser state, its
// reader's position and its live progress (examples and batches trained, the
// training loss so far), all at the cut.
struct cut_report {
  std::uint32_t trainer = 0;
  reader_mark reader;
  float_blob replica, state;
  sync_hold sync;
  progress_report progress;
  double pause_seconds = 0; // from the cut's arrival until the workers went on
  friend bool operator==(const cut_report& a, const cut_report& b) {
    return a.trainer == b.trainer && a.reader == b.reader && a.replica == b.replica &&
           a.state == b.state && a.sync == b.sync && a.progress == b.progress &&
           a.pause_seconds == b.pause_seconds;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cut_report& x) {
  return f(caf::meta::type_name("cut_report"), x.trainer, x.reader, x.replica, x.state, x.sync,
           x.progress, bits(x.pause_seconds));
}

// What an embedding shard wrote for a cut: the file and when it aligned.
struct shard_cut_file {
  std::string name;
  std::uint64_t bytes = 0;
  std::uint32_t crc32c = 0;
  std::uint64_t rows_copied = 0;   // rows copied on write while the file was written
  std::uint64_t pushes_held = 0;   // pushes that waited for the alignment
  friend bool operator==(const shard_cut_file& a, const shard_cut_file& b) {
    return a.name == b.name && a.bytes == b.bytes && a.crc32c == b.crc32c &&
           a.rows_copied == b.rows_copied && a.pushes_held == b.pushes_held;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_cut_file& x) {
  return f(caf::meta::type_name("shard_cut_file"), x.name, x.bytes, x.crc32c, x.rows_copied,
           x.pushes_held);
}

// A piece of an embedding shard's model file, sent instead of written where
// the shard runs (a multi-node export: cluster/shard_fetch.hpp): the file's
// name and size in bytes, the piece's offset, the CRC32C of the file's bytes
// [0, offset + bytes.size()) and the piece's bytes.
struct file_chunk {
  std::string name;
  std::uint64_t size = 0;
  std::uint64_t offset = 0;
  std::uint32_t crc32c = 0;
  byte_blob bytes;
  friend bool operator==(const file_chunk& a, const file_chunk& b) {
    return a.name == b.name && a.size == b.size && a.offset == b.offset &&
           a.crc32c == b.crc32c && a.bytes == b.bytes;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, file_chunk& x) {
  return f(caf::meta::type_name("file_chunk"), x.name, x.size, x.offset, x.crc32c, x.bytes);
}

} // namespace messages
