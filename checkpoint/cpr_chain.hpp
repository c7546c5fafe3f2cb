#pragma once
// chain.json, a CPR shard folder's commit point (cpr_files.hpp): the saves
// from the newest full one on, in order. Used by cpr_files.cpp and
// cpr_dynamic.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/cpr_files.hpp"

namespace checkpoint {

// The file name of save `seq`: NNNNNNNN.bin (eight digits).
std::string save_name(std::uint64_t seq);

// Reads FOLDER/chain.json into `out`; false with *err (when not null) naming
// the file when it is unreadable, of another format or shard, names a file
// other than save_name(seq), or does not begin with a full save.
bool read_chain(const std::string& folder, const cpr_shape& shape,
                std::vector<cpr_save_info>& out, std::string* err);

// Writes FOLDER/chain.json atomically (file_io.hpp: write_file_atomic).
bool write_chain(const std::string& folder, const cpr_shape& shape,
                 const std::vector<cpr_save_info>& saves, std::string* err);

} // namespace checkpoint
