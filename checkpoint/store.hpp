#pragma once
// Checkpoint folders under a checkpoint dir, written atomically:
//
//   DIR/ckpt-000000123456/        one complete checkpoint (examples done)
//       manifest.json             written last inside the folder
//       embedding-0.bin ...       array files (array_file.hpp)
//   DIR/ckpt-000000123456.1/      the same count written again (generation 1)
//   DIR/LATEST                    name of the newest complete checkpoint
//   DIR/LOCK                      the owning run's lock and pid (dir_lock.hpp)
//
// folder_writer::begin takes the dir's lock (a second run is refused) and
// builds DIR/.tmp-ckpt-N-PID; commit fsyncs every file and the folder,
// renames it to DIR/ckpt-N (or, when a checkpoint of that name exists, to the
// next generation ckpt-N.G beside it), fsyncs DIR, replaces LATEST
// (write_file_atomic), and only then removes older generations of the name
// and all but the newest `keep` checkpoints (by examples, then generation),
// never the one LATEST names. LATEST never names a folder with a missing
// file at any instant; a crash at any point leaves the previous checkpoint
// and LATEST intact. A left-over .tmp-* folder is removed by the next commit
// when it is this process's or its owner (the PID) is dead.
//
// open_checkpoint() accepts a checkpoint folder (with manifest.json) or a
// checkpoint dir (then LATEST names the folder, ckpt-N or ckpt-N.G). It parses the manifest and
// checks the files: each listed file present with its size, and no other
// file in the folder. Checksums are checked by verify_file() or, while
// loading, by comparing array_file_reader::finish()'s CRC with file_entry().
#include <optional>
#include <string>

#include "checkpoint/manifest.hpp"

namespace checkpoint {

class folder_writer {
public:
  // Creates DIR (if needed) and the temporary folder for checkpoint `name`.
  bool begin(const std::string& dir, const std::string& name, std::string* err);
  // The temporary folder, and the path of a file in it.
  const std::string& folder() const { return tmp_; }
  std::string path(const std::string& file) const { return tmp_ + "/" + file; }
  // Records a file written into path(file) (write_array_file's info).
  void add(file_info info) { files_.push_back(std::move(info)); }
  // manifest.json (with the recorded files), fsync, rename, LATEST, pruning.
  // Returns the final folder's path in *folder (DIR/NAME or DIR/NAME.G).
  bool commit(manifest m, std::size_t keep, std::string* folder, std::string* err);
  // Removes the temporary folder (after a failure).
  void abandon();
  // The final name, when it is known only at the commit (a cluster cut's
  // examples are counted while its files are written).
  void rename(const std::string& name) { name_ = name; }

private:
  std::string dir_, name_, tmp_;
  std::vector<file_info> files_;
};

// "ckpt-000000001234" for 1234 examples.
std::string checkpoint_name(std::uint64_t examples);

struct opened_checkpoint {
  std::string folder; // the checkpoint folder
  manifest m;
  std::string file(const std::string& name) const { return folder + "/" + name; }
  const file_info* entry(const std::string& name) const;
};

std::optional<std::string> open_checkpoint(const std::string& path, opened_checkpoint& out);

// The CRC32C `crc` of file `name` against the manifest: an error naming the
// file when they differ.
std::optional<std::string> check_crc(const opened_checkpoint& c, const std::string& name,
                                     std::uint32_t crc);

} // namespace checkpoint
