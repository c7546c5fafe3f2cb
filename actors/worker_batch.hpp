#pragma once
// worker_batch: one mini-batch in a Hogwild worker's pipeline, with the
// lookup bookkeeping that the worker actor would otherwise carry inline.
//
//   prepare(batch)      keys = make_keys(cat) (make_bag_keys: every id of a
//                       multi-hot batch's bags); index = sparse_index(keys);
//                       unique keys split by owning shard (model::key_owner)
//   shard_keys(s)       the keys of shard s's ONE lookup_request
//   set_rows(s, rows)   scatters the reply into the unique-rows buffer, which
//                       is in sparse_index order (what model::dlrm expects)
//   input()             model::embedding_input{rows, inverse, num_unique,
//                       bag offsets (multi-hot) or null}
//   shard_grads(s, g)   the summed row gradients of shard s, in the order of
//                       shard_keys(s), for its ONE embedding_grads push
//   shard_rows(s)       its rows as received, in the same order (dct.mp)
//
// Dynamic tables (dynamic = true, model.embedding=dynamic): a row is an
// (table, id) pair, de-duplicated by a 64-bit tag of both and owned by shard
// model::id_owner(id); shard_keys(s) then lists two words per row, table and
// id, and the replies and pushes stay dim floats per row.
//
// Within a shard, keys keep their order of first appearance in the batch.
// Buffers are kept across prepare() calls, so steady state does not allocate
// (the example_batch itself is moved in from the reader's message).
// Not thread-safe: owned by one worker actor. No CAF here.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>


#include "actors/hogwild_rows.hpp"
#include "messages/messages.hpp"
#include "model/arch.hpp"
#include "model/dct_codec.hpp"
#include "model/dct_mp_dynamic.hpp"
#include "model/embedding.hpp"
#include "model/interaction.hpp"

namespace actors {

class worker_batch {
public:
  // Checks that `b` matches the model (num_dense, num_cat == tables, buffer
  // sizes). Returns an empty string when it does, else what is wrong.
  static std::string validate(const messages::example_batch& b, const model::arch& a);

  // Takes over `b` (moved in), computes its row keys, de-duplicates them and
  // splits the unique keys over `num_shards` shards. Pre: validate(b) passed.
  void prepare(std::uint64_t seq, messages::example_batch&& b, const model::arch& a,
               std::size_t num_shards, bool dynamic = false);

  std::uint64_t seq() const { return seq_; }
  const messages::example_batch& examples() const { return batch_; }
  std::size_t size() const { return batch_.size(); }
  std::size_t num_unique() const { return index_.unique().size(); }
  std::size_t num_shards() const { return shard_pos_.size(); }

  // Unique keys owned by shard s (0 when the batch uses none of its rows).
  std::size_t shard_size(std::size_t s) const { return shard_pos_[s].size(); }
  // out = the unique keys of shard s, in the order its reply must follow
  // (dynamic: table and id of each).
  void shard_keys(std::size_t s, std::vector<std::uint64_t>& out) const;

  // Shards with keys that have not answered yet; 0 = the rows are complete.
  std::size_t missing() const { return missing_; }
  // Shard s has keys in this batch and has not answered yet.
  bool awaits(std::size_t s) const {
    return s < shard_pos_.size() && !shard_pos_[s].empty() && !answered_[s];
  }
  // Stores shard s's rows (dim floats per key of shard_keys(s)). False when
  // the size is wrong or shard s has no keys or already answered.
  bool set_rows(std::size_t s, const float* rows, std::size_t n_floats);
  // The same from a decoded thresholded reply (dct.mp) over [keys * dim]:
  // the entries it does not carry are 0. False as above, or when its size is
  // not shard_size(s) * dim.
  bool set_rows(std::size_t s, const model::sparse_vector& rows);
  // Dynamic tables with dct.mp: the reply's row marks (model/dct_mp_dynamic.hpp)
  // over shard s's rows, kept for its push. Pre: decoded over shard_size(s).
  void set_marks(std::size_t s, const model::row_marks& m);
  // out[j] = the mark of shard s's row j (shard_keys order): 0 none,
  // model::mark_absent (an id without a row), model::mark_fresh (new to
  // this worker).
  void shard_marks(std::size_t s, std::vector<std::uint8_t>& out) const;

  // Local rows (cluster.local-rows): shard s's rows gathered from its
  // tables straight into the batch. False as set_rows.
  bool gather_rows(std::size_t s, const hogwild_rows& rows);
  // Local rows: shard s's summed row gradients (grad_unique, sparse_index
  // order) applied straight to its tables.
  void apply_grads(std::size_t s, const float* grad_unique, hogwild_rows& rows) const;

  // The batch's rows for model::dlrm. Valid while missing() == 0 and until
  // the next prepare().
  model::embedding_input input() const {
    return {rows_.data(), index_.inverse().data(), index_.unique().size(),
            batch_.cat_offsets.size() > 0 ? batch_.cat_offsets.data() : nullptr};
  }

  // out = rows of `grad_unique` ([num_unique * dim], sparse_index order) that
  // belong to shard s, in the order of shard_keys(s).
  void shard_grads(std::size_t s, const float* grad_unique, std::vector<float>& out) const;
  // out = the rows of shard s as stored by set_rows, in the order of
  // shard_keys(s) (dct.mp: the mask of what the shard sent).
  void shard_rows(std::size_t s, std::vector<float>& out) const {
    shard_grads(s, rows_.data(), out);
  }

private:
  void prepare_dynamic(const model::arch& a, std::size_t num_shards);

  std::uint64_t seq_ = 0;
  std::size_t dim_ = 0;
  messages::example_batch batch_;
  std::vector<std::uint64_t> keys_;                   // [ids]: size * tables, or the bags' ids
  model::sparse_index index_;
  std::vector<std::vector<std::uint32_t>> shard_pos_; // per shard: positions in unique()
  std::vector<char> answered_;                        // per shard
  std::size_t missing_ = 0;
  std::vector<float> rows_;                           // [num_unique * dim]
  bool dynamic_ = false;
  std::vector<std::uint64_t> rows_of_;                // dynamic: [num_unique * 2] table, id
  std::vector<std::uint32_t> table_of_;               // dynamic: scratch, each id's table
  std::vector<std::uint8_t> marks_;                   // dynamic, dct.mp: per unique row
};

} // namespace actors
