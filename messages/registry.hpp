#pragma once
// The one registry of message types: every struct of messages.hpp listed
// once. register_messages() must run on every node's config before the
// actor system starts; the error category is registered with it so errors
// render as "shadowsyn: shard_down (context)".
#include <caf/actor_system_config.hpp>
#include <caf/message.hpp>
#include <caf/type_id.hpp>

#include "messages/errors.hpp"
#include "messages/cut_messages.hpp"
#include "messages/messages.hpp"
#include "messages/node_messages.hpp"

CAF_BEGIN_TYPE_ID_BLOCK(shadowsync, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(shadowsync, (messages::lookup_request))
  CAF_ADD_TYPE_ID(shadowsync, (messages::embedding_rows))
  CAF_ADD_TYPE_ID(shadowsync, (messages::embedding_grads))
  CAF_ADD_TYPE_ID(shadowsync, (messages::dense_range))
  CAF_ADD_TYPE_ID(shadowsync, (messages::ring_chunk))
  CAF_ADD_TYPE_ID(shadowsync, (messages::example_batch))
  CAF_ADD_TYPE_ID(shadowsync, (messages::worker_stats))
  CAF_ADD_TYPE_ID(shadowsync, (messages::sync_stats))
  CAF_ADD_TYPE_ID(shadowsync, (messages::trainer_report))
  CAF_ADD_TYPE_ID(shadowsync, (messages::progress_report))
  CAF_ADD_TYPE_ID(shadowsync, (messages::float_blob))
  CAF_ADD_TYPE_ID(shadowsync, (messages::key_blob))
  CAF_ADD_TYPE_ID(shadowsync, (messages::node_hello))
  CAF_ADD_TYPE_ID(shadowsync, (messages::node_roster))
  CAF_ADD_TYPE_ID(shadowsync, (messages::role_plan))
  CAF_ADD_TYPE_ID(shadowsync, (messages::spawned_roles))
  CAF_ADD_TYPE_ID(shadowsync, (messages::reader_mark))
  CAF_ADD_TYPE_ID(shadowsync, (messages::sync_hold))
  CAF_ADD_TYPE_ID(shadowsync, (messages::cut_report))
  CAF_ADD_TYPE_ID(shadowsync, (messages::shard_cut_file))
  CAF_ADD_TYPE_ID(shadowsync, (messages::sparse_range))
  CAF_ADD_TYPE_ID(shadowsync, (messages::sparse_rows))
  CAF_ADD_TYPE_ID(shadowsync, (messages::sparse_grads))
  CAF_ADD_TYPE_ID(shadowsync, (messages::ring_sparse))
  CAF_ADD_TYPE_ID(shadowsync, (messages::node_challenge))
  CAF_ADD_TYPE_ID(shadowsync, (messages::file_chunk))
CAF_END_TYPE_ID_BLOCK(shadowsync)

namespace messages {

inline void register_messages(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::shadowsync>();
  // The ring's member list (peers_atom). CAF 0.17.6 gives it a type ID but does
  // not add it to the types a node can send: without this, a remote syncer
  // would not receive its peers.
  cfg.add_message_type<std::vector<caf::strong_actor_ptr>>("std::vector<@strong_actor_ptr>");
  // (CAF 0.17's add_error_category<T> template does not compile: pass a renderer.)
  cfg.add_error_category(error_category,
                         [](std::uint8_t code, caf::atom_value, const caf::message& ctx) {
                           std::string out = "shadowsync: " + to_string(static_cast<errc>(code));
                           if (!ctx.empty())
                             out += " (" + caf::to_string(ctx) + ")";
                           return out;
                         });
}

} // namespace messages
