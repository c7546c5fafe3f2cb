#pragma once
// The files a command writes, checked before any work and written so that a
// crash never leaves half of one, and never onto one of the command's inputs.
//
//   input_files     the (device, inode) of each existing input file: the data,
//                   the config file, the checkpoint resumed from
//   check_output_*  before the first example: the path is not an input (by
//                   inode, so a hard link or "./x" is caught too), is not a
//                   folder where a file is expected, and its folder accepts a
//                   new file (a probe file is created and removed there).
//                   Errors name the option and the path.
//   replacing_file  a file written as PATH.tmp-PID and renamed onto PATH by
//                   commit(): readers see the old file or the new one; a
//                   failure or a destructor without commit() removes the
//                   temporary and leaves PATH as it was.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace runtime {

class input_files {
public:
  // Records `path` (and, for a folder, every regular file directly in it);
  // a path that does not exist is ignored.
  void add(const std::string& path);
  void add(const std::vector<std::string>& paths);
  // The input that `path` names (same device and inode), if any.
  std::optional<std::string> same_as(const std::string& path) const;

private:
  struct entry {
    std::uint64_t dev, ino;
    std::string path;
  };
  std::vector<entry> files_;
};

// `path`, the value of option `key`, can be written as a file; empty = ok.
std::optional<std::string> check_output_file(const std::string& key, const std::string& path,
                                             const input_files& inputs);

// `path`, a folder the run fills (output.dir, checkpoint.dir, output.model),
// exists or can be created, and accepts new files. Creates it.
std::optional<std::string> check_output_dir(const std::string& key, const std::string& path,
                                            const input_files& inputs);

class replacing_file {
public:
  replacing_file() = default;
  replacing_file(const replacing_file&) = delete;
  replacing_file& operator=(const replacing_file&) = delete;
  ~replacing_file(); // removes the temporary unless committed

  // Creates PATH.tmp-PID for writing; false with *err naming it.
  bool open(const std::string& path, std::string* err);
  std::FILE* get() const { return f_; }
  // Flushes, fsyncs, closes and renames the temporary onto PATH.
  bool commit(std::string* err);

private:
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
};

// `text` into `path` through a replacing_file.
bool write_replacing(const std::string& path, const std::string& text, std::string* err);

} // namespace runtime
