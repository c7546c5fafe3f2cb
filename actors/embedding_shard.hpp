#pragma once
// embedding_shard: owns one slice of the rows of every embedding table, with
// their sparse-optimiser state; serves lookups and applies pushed gradients.
//
// Ownership (model/shard_layout.hpp). Global row keys are model::row_key(t,
// row) with t < num_tables and row < rows_per_table. Shard s of E owns
// (t, row) iff row % E == s and stores it as local row row / E of table t.
// Every table has local_rows = ceil(rows_per_table / E) local rows; on
// shards with s >= rows_per_table % E (when E does not divide
// rows_per_table) the last local row of each table is padding: initialised,
// never looked up or pushed.
//
// Initialisation: Uniform(-sqrt(1/rows_per_table), +sqrt(1/rows_per_table))
// (the bound of the FULL table, as in the public DLRM code) from cfg.seed,
// accumulators 0. The runtime gives each shard its own seed.
//
// Protocol (embedding_shard_actor in interfaces.hpp):
// - lookup(lookup_request{batch, keys}) -> embedding_rows{batch, rows}: rows
//   [keys * dim], the rows of the keys in request order (duplicates allowed).
//   A key this shard does not own, or out of range, fails the whole request
//   with errc::bad_request "embedding-shard-S: ...".
// - push(embedding_grads{keys, grads}): grads [keys * dim]; cfg.optimizer is
//   applied to each key's row with its gradient, in order (a duplicated key is
//   updated twice; callers de-duplicate). No reply: a malformed push (size
//   mismatch, a key not owned) is logged with spdlog::warn and dropped whole.
// - dump -> float_blob [num_tables * local_rows * dim]: table-major, then
//   local row, dim floats each; element (t, l, j) is at
//   (t * local_rows + l) * dim + j and holds global row l * E + s of table t
//   (padding rows included, see above).
// - save(FOLDER) -> (name, bytes, CRC32C): writes FOLDER/embedding-S.bin
//   (checkpoint/model_files.hpp) with the rows as they are when the request
//   is handled; io_error naming the file when it cannot. Where threads may
//   send (the wall clock) a thread writes it and the reply comes once it is
//   written, the shard serving lookups and pushes meanwhile
//   (embedding_shard_save.cpp); on the discrete-event engine the handler
//   writes it. save(offset) -> file_chunk: the same
//   file's bytes from offset instead, at most ship_piece_bytes a reply, for a
//   coordinator in another process (embedding_shard_export.cpp).
//
// - DCT (cfg.dct.mp; model/dct_mp.hpp): lookup(sparse, lookup_request) ->
//   sparse_rows: the same rows with only the entries above their table's
//   threshold, encoded (model/dct_codec.hpp); push(sparse_grads): decoded to
//   an embedding_grads (the unsent entries 0) and applied like one. With
//   dct.mp-push-places the shard keeps each sender's last 8 thresholded
//   lookups (held_lookups.hpp), and a push may name its rows by their place
//   in its batch's lookup instead of by key (messages::rows_placed). A
//   payload that does not decode to rows * dim entries, or a placed push
//   whose lookup is not held, is dropped whole, like a malformed push; a
//   thresholded lookup at a shard without dct.mp is refused (bad_request).
//
// Checkpoint cuts (cluster/cluster_cut.hpp; embedding_shard_cut.cpp): the
// shard aligns the markers of every worker like a barrier in a dataflow
// snapshot (Carbone et al., "Lightweight asynchronous snapshots for
// distributed dataflows", 2015, itself Chandy-Lamport over FIFO channels):
// - cut(N, FOLDER, W) from the coordinator: cut N, aligned over W workers.
// - cut(N) from a worker: every push it sent before is in the cut. Its later
//   pushes are held back (not applied) until the cut is aligned; its lookups
//   are served at once (a read changes nothing).
// - end from a worker: it pushes nothing more, so it counts as marked.
// - Aligned (the request arrived, and W workers marked or ended): the tables
//   now hold exactly the pushes of the examples before the cut. A
//   checkpoint::background_writer starts streaming them to
//   FOLDER/embedding-S.bin, every later push copies its rows on write first,
//   the held pushes are applied, and the reply (shard_cut_file) goes when the
//   file is written. Training never waits for the disk.
// One cut at a time: the coordinator starts the next after every reply.
// Bounds (cfg.max_workers, the job's workers): a cut request waiting for more
// workers than that, a marker or end from one actor more than that, and a
// message of a cut not after the last one finished are refused (logged with
// the sender; the request answered bad_request) and change nothing.
//
// Dynamic tables (cfg.dynamic, model.embedding=dynamic;
// embedding_shard_dynamic.cpp): the shard holds a dynamic table per table
// for the ids it owns (model::id_owner(id, E) == shard). A key is then two
// words, table and id: lookup admits ids when due and replies zeros for an
// id without a row; push updates only rows that exist; dump(ids) replies
// every row as (table, id) pairs with their floats; stats(ids) the counters;
// save writes FOLDER/dynamic-S.bin (checkpoint/dynamic_files.hpp, without
// sketches). CPR saves (recovery.mode=partial) hold the ids with their rows,
// the policy counting updates per slot (checkpoint/cpr_dynamic.hpp); a
// restarted shard's recover replaces its tables with the chain's. A
// checkpoint cut writes FOLDER/dynamic-S.bin from a copy of the tables taken
// in the handler that aligns it (no copy on write; written off the handler,
// actors/off_handler.hpp), then applies the held pushes; lookups of marked
// workers, served at once, already change admissions and use counts. Local
// rows are refused for dynamic tables at config validation. dct.mp:
// a thresholded lookup of (table, id) pairs replies the thresholded rows
// and row marks (model/dct_mp_dynamic.hpp: ids without a row, rows new to
// the asking worker, whose residual it then drops); a thresholded push is
// decoded and applied like a plain one.
//
// Hogwild: all trainers push to the same shards; updates of a row by
// different trainers interleave in mailbox order (one message at a time).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/typed_response_promise.hpp>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/embedding_shard_cpr.hpp"
#include "actors/held_lookups.hpp"
#include "actors/hogwild_rows.hpp"
#include "actors/interfaces.hpp"
#include "checkpoint/background_writer.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/file_image.hpp"
#include "model/dct_mp.hpp"
#include "model/dct_mp_dynamic.hpp"
#include "model/dynamic_tables.hpp"
#include "actors/authority.hpp"
#include "model/embedding.hpp"
#include "model/optimizer.hpp"

namespace actors {

struct embedding_shard_config {
  std::uint32_t shard = 0, num_shards = 1; // this shard s of E
  std::size_t num_tables = 26;             // one per categorical column
  std::uint64_t rows_per_table = 100000;   // full (unsharded) table size
  std::size_t dim = 16;                    // floats per row
  model::sparse_optimizer optimizer;       // row-wise Adagrad by default
  std::uint64_t seed = 1;                  // initialisation
  // Every worker of the job (cluster.trainers x cluster.workers): the most
  // senders a cut may count as marked or ended, and the most a cut request
  // may wait for. 0: not bounded (tests that do not model a job).
  std::uint32_t max_workers = 0;
  // Resume (simulated cluster): the whole tables of a checkpoint; the shard
  // copies its own rows (row mod num_shards == shard) and their optimiser
  // state instead of initialising. Same shape as this config, else init fails.
  std::shared_ptr<const model::embedding_tables> initial;
  // recovery.mode=partial: the shard's own saves (embedding_shard_cpr.hpp).
  shard_cpr_config cpr;
  // A shard restarted during checkpoint cut N (cluster/cut_run.hpp): the
  // cuts up to N are over for it. Their markers, which the workers send
  // once rebound, are refused, and no push waits for a request it will
  // never get.
  std::uint64_t cuts_over = 0;
  // dct.mp (with mp_keep and refresh): thresholded lookups are served.
  model::dct_settings dct;
  // cluster.local-rows: the workers of this process read and write the
  // tables directly; the shard attaches them here once initialised.
  rows_ptr local;
  // Who may send what (multi-node: filled by the node agent from the plan).
  authority who;
  // model.embedding=dynamic (embedding_shard_dynamic.cpp): the shard holds
  // dynamic tables (model/dynamic_tables.hpp) with these settings, max_rows
  // being its share of embedding.max-rows, instead of hashed ones. Rows are
  // seeded with model_seed (an id's first row is the one the sequential
  // engine gives it). Its clock for admission, eviction and ttl is lookups
  // served x batch_size examples.
  std::optional<model::dynamic_settings> dynamic;
  std::uint64_t model_seed = 1, batch_size = 1;
  // Resume: the whole dynamic tables of a checkpoint; the shard copies the
  // rows of its ids (model::id_owner), more than max_rows fails init.
  std::shared_ptr<const model::dynamic_tables> initial_dynamic;
  // ... and this shard's own admission sketches and table counters from
  // the checkpoint, when it was written by as many shards (each shard's
  // sketch is sized by its share of embedding.max-rows); else admission
  // counts start afresh.
  std::optional<checkpoint::shard_counters> initial_counters;
};

// One checkpoint cut in progress at a shard (embedding_shard_cut.cpp).
struct shard_cut {
  std::uint64_t id = 0;
  bool requested = false;   // the coordinator's request arrived
  std::string folder;       // where the file goes
  std::uint32_t expected = 0; // workers to align over
  // Non-empty: align over exactly these workers ("ID@NODE"), each marked or
  // ended (a cut after a trainer's loss: expected is then their number).
  std::vector<std::string> only;
  std::vector<caf::actor_addr> marked; // workers whose marker arrived
  std::vector<std::string> marked_names; // the same as "ID@NODE" (see ended_names)
  std::vector<messages::embedding_grads> held; // their later pushes, until aligned
  bool aligned = false;     // the snapshot is taken, the writer runs
  std::uint64_t pushes_held = 0;
  caf::typed_response_promise<messages::shard_cut_file> promise;
};

// Dynamic tables' cut file: a copy of the tables taken at the alignment,
// written off the handler (actors/off_handler.hpp): by its own thread, which
// then sends the shard done(id), or within the handler on the discrete-event
// engine. Destroying the job joins the thread.
struct dynamic_cut_job {
  std::thread thread;
  std::shared_ptr<checkpoint::file_image> image; // kept instead of written (multi-node)
  bool ok = false;
  checkpoint::file_info info;
  std::string err;
  dynamic_cut_job() = default;
  dynamic_cut_job(const dynamic_cut_job&) = delete;
  dynamic_cut_job& operator=(const dynamic_cut_job&) = delete;
  ~dynamic_cut_job() {
    if (thread.joinable())
      thread.join();
  }
};

// An export save(FOLDER) whose file is written off the handler
// (embedding_shard_save.cpp, actors/off_handler.hpp): hashed tables through a
// background writer of the rows as they were at the request (rows pushed
// meanwhile are copied on write), dynamic tables from a copy taken at the
// request. Where threads may send, the thread sends the shard done(save,
// id), whose handler delivers the promise; on the discrete-event engine the
// handler waits for the file and delivers it. Destroying
// it joins the thread.
struct shard_save {
  std::uint64_t id = 0;
  caf::typed_response_promise<std::string, std::uint64_t, std::uint32_t> promise;
  std::unique_ptr<checkpoint::background_writer> writer; // hashed tables
  std::unique_ptr<dynamic_cut_job> dynamic;              // dynamic tables
};

struct embedding_shard_state {
  static inline const char* name = "embedding-shard";

  embedding_shard_state() = default;
  embedding_shard_state(const embedding_shard_state&) = delete;
  embedding_shard_state& operator=(const embedding_shard_state&) = delete;
  // Answers the saves in flight (embedding_shard_save.cpp) before the
  // members go.
  ~embedding_shard_state();

  embedding_shard_config cfg;
  std::uint64_t local_rows = 0; // ceil(rows_per_table / num_shards)
  // [num_tables * local_rows, dim]; shared with cfg.local (local rows)
  std::shared_ptr<model::embedding_tables> tables;
  std::uint64_t dropped_pushes = 0;
  std::optional<shard_cut> cut;
  std::vector<caf::actor_addr> ended; // workers that sent end_atom
  // The same as "ID@NODE", named when their end came (a remote worker's
  // address names no one once its proxy is gone).
  std::vector<std::string> ended_names;
  std::uint64_t last_cut = 0;         // the id of the last cut finished
  // Writes the cut's file beside the shard (declared after `tables`, which
  // it reads: destroyed, so joined, first).
  std::unique_ptr<checkpoint::background_writer> writer;
  std::unique_ptr<dynamic_cut_job> dynamic_writer; // the same for dynamic tables
  // A multi-node cut (asked without a folder): its file kept in memory until
  // the coordinator has fetched it (cut(N, offset); embedding_shard_cut.cpp).
  std::shared_ptr<checkpoint::file_image> kept_cut;
  std::uint64_t kept_cut_id = 0, kept_shipped = 0;
  std::uint32_t kept_crc = 0; // of the bytes shipped so far
  // Export saves being written (after `tables`, which their writers read),
  // and how many were started (their ids).
  std::vector<std::unique_ptr<shard_save>> saves;
  std::uint64_t saves_started = 0;
  std::vector<std::uint64_t> cow_keys; // scratch: local keys of a push
  shard_cpr cpr;                       // its own saves (recovery.mode=partial)
  std::optional<model::dct_row_thresholds> mp; // dct.mp: one threshold per table
  std::vector<float> mp_rows;                  // scratch: a thin lookup's rows, dense
  model::sparse_vector mp_out, mp_in;          // scratch: a thresholded reply, a push

  // "embedding-shard-S", for logs and error messages.
  std::string who() const;
  // Checks the config and builds and initialises the tables.
  caf::error init(embedding_shard_config c);
  // dct.mp: the per-table thresholds (none when it is off).
  void init_dct();
  // Whether this shard owns the global key; if not, *why says why.
  bool owns(std::uint64_t key, std::string* why) const;
  // The local key of an owned global key.
  std::uint64_t local_key(std::uint64_t key) const {
    return model::shard_local_key(key, cfg.num_shards);
  }
  // bad_request naming the first key of the request this shard does not own.
  caf::error check_lookup(const messages::lookup_request& req) const;
  // out ([keys * dim]) = the rows of the (owned) keys, in order.
  void copy_rows(const std::vector<std::uint64_t>& keys, float* out) const;
  // The request's rows, or bad_request.
  caf::expected<messages::embedding_rows> lookup(const messages::lookup_request& req) const;
  // dct.mp: the request's rows thresholded and encoded, or bad_request.
  caf::expected<messages::sparse_rows> sparse_lookup(const messages::lookup_request& req);
  // dct.mp: a thresholded push from `from` as the embedding_grads it stands
  // for (its keys moved out of g, or a placed push's taken from mp_held),
  // or bad_request when the payload does not decode or a placed push's
  // lookup is not held.
  caf::expected<messages::embedding_grads> expand(messages::sparse_grads& g,
                                                  const caf::actor_addr& from);
  // dct.mp-push-places: each worker's last thresholded lookups (by
  // mp_worker), at most 2 x cfg.max_workers + 8 workers' (init).
  held_lookups mp_held;
  // Applies the optimiser; on a malformed push changes nothing and says why.
  // While a cut's file is written, the rows are first copied on write.
  caf::error push(const messages::embedding_grads& g);
  // The flat local row (table t, local row l) -> t * local_rows + l.
  std::uint64_t flat_row(std::uint64_t local) const {
    return model::key_table(local) * local_rows + model::key_row(local);
  }
  // The whole local table in the documented layout.
  messages::float_blob dump() const;

  // model.embedding=dynamic (embedding_shard_dynamic.cpp). Keys of lookups
  // and pushes are (table, id) pairs of this shard's ids.
  std::shared_ptr<model::dynamic_tables> dyn;
  std::uint64_t dyn_served = 0;      // lookups served: the tables' clock
  std::uint64_t dyn_gone_rows = 0;   // pushed rows whose id had no row (skipped)
  caf::error init_dynamic();
  // Copies the rows of its ids from cfg.initial_dynamic (a resume).
  caf::error take_rows();
  // Installs the checkpoint's own sketches and counters of this shard
  // (init_dynamic); a mismatch in size is logged and skipped.
  void take_counters(const checkpoint::shard_counters& k);
  // bad_request naming the first malformed or foreign pair.
  caf::error check_pairs(const std::vector<std::uint64_t>& keys, const char* what) const;
  // Training lookup: admits ids when due; an id without a row reads zeros.
  caf::expected<messages::embedding_rows> dynamic_lookup(const messages::lookup_request& req);
  // out ([pairs * dim]) = the pairs' rows as dynamic_lookup reads them;
  // slots (one a pair) = each row's slot or no_row. Tells mp_seen of the
  // admissions it makes. Pre: check_pairs passed.
  void dynamic_rows(const std::vector<std::uint64_t>& keys, float* out,
                    std::vector<std::uint32_t>& slots);
  // dct.mp: the thresholded rows with their marks for worker w (mp_worker).
  caf::expected<messages::sparse_rows> dynamic_sparse_lookup(const messages::lookup_request& req,
                                                             std::size_t w);
  // dct.mp: which workers were served each slot's row (model/dct_mp_dynamic.hpp),
  // the workers by sender (an index each), and the marks' scratch.
  std::optional<model::dct_row_seen> mp_seen;
  std::vector<caf::actor_addr> mp_workers;
  std::vector<std::uint32_t> mp_slots;
  model::row_marks mp_marks;
  // The index of a sender of thresholded lookups (a new one is appended);
  // max_mp_workers when that many are known already (the lookup is refused).
  static constexpr std::size_t max_mp_workers = 4096;
  std::size_t mp_worker(const caf::actor_addr& a);
  // The index of a known sender, or max_mp_workers (none added).
  std::size_t known_mp_worker(const caf::actor_addr& a) const;
  // Updates the rows that exist; the others' gradients are dropped.
  caf::error dynamic_push(const messages::embedding_grads& g);
  messages::embedding_grads dynamic_dump() const;
  messages::key_blob dynamic_counters() const;

  // A multi-node export (embedding_shard_export.cpp): the file save(FOLDER)
  // would write, sent in pieces. Offset 0 takes its image (hashed: the
  // tables' own arrays; dynamic: a copy of the rows); each later request
  // must ask for the offset after the last piece; the image is dropped
  // after the last one. bad_request for any other offset.
  caf::expected<messages::file_chunk> ship(std::uint64_t offset);
  static constexpr std::size_t ship_piece_bytes = std::size_t{4} << 20;
  std::unique_ptr<checkpoint::file_image> shipping;
  std::uint64_t shipped = 0;     // bytes sent of shipping
  std::uint32_t shipped_crc = 0; // their CRC32C
};

embedding_shard_actor::behavior_type
embedding_shard(embedding_shard_actor::stateful_pointer<embedding_shard_state> self,
                embedding_shard_config cfg);

} // namespace actors
