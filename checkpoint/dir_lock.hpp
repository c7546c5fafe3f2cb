#pragma once
// One run owns a checkpoint dir at a time (DESIGN.md section 13, storage).
//
// The owner holds an advisory lock, flock(LOCK_EX | LOCK_NB) on DIR/LOCK,
// for the rest of its life; the file holds the owner's pid (for messages
// only: the lock is the flock, which the kernel drops when the owner dies, so
// a dead owner's dir is simply taken over). A second run on the dir is
// refused with an error naming the dir and the owner's pid.
//
// The locks are process-wide: taking a dir this process already owns again
// (output.model = checkpoint.dir, every folder_writer::begin) succeeds at
// once. The lock's descriptor is close-on-exec.
//
// folder_writer::begin takes its dir's lock and write_cpr_save its shard
// folder's, so no writer runs without one; a command takes the locks of its
// output dirs before the first example (lock_checkpoint_dirs), so a second
// run is refused before it does any work.
#include <optional>
#include <string>
#include <vector>

namespace checkpoint {

// Creates DIR if needed and takes its lock (held until the process ends).
// Error: "checkpoint dir 'D' is in use by another run (pid P holds 'D/LOCK')".
std::optional<std::string> lock_checkpoint_dir(const std::string& dir);

// Each non-empty dir of `dirs`, in order (the first refusal is returned).
std::optional<std::string> lock_checkpoint_dirs(const std::vector<std::string>& dirs);

// Whether a process is running with this pid (a temporary folder's owner).
bool process_alive(long pid);

} // namespace checkpoint
