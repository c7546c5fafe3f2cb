#pragma once
// Every message of the cluster protocol, one header per conversation, each
// struct with its inspect() right below it, plus the atoms. Float and key
// payloads are raw blobs (blobs.hpp). Register everything on every node with
// register_messages(cfg) (registry.hpp); a type missing there arrives empty
// on a remote path.
#include "messages/atoms.hpp"              // the verbs
#include "messages/batch_messages.hpp"     // reader -> worker
#include "messages/embedding_messages.hpp" // worker <-> embedding shard
#include "messages/report_messages.hpp"    // roles -> trainer -> coordinator
#include "messages/sync_messages.hpp"      // syncer <-> dense shard, syncer ring
