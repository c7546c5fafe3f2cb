#pragma once
// What data.train / data.eval name, expanded into the files read.
//
// Each entry is one of:
// - "-": standard input (read once; see byte_stream.hpp);
// - a folder: the regular files directly inside it (symbolic links
//   followed, sub-folders not read), without names that start with '.' or
//   end in ".meta.json" (datagen's sidecars), sorted by name in byte order
//   (strcmp: "part-10" before "part-9"; pad numbers to sort them);
// - a pattern with '*', '?' or '[' that is not itself an existing path: the
//   regular files it matches (glob(3)), sorted by name in byte order;
// - anything else: that file.
// Entries keep their order; the files of one entry follow one another.
// Compression is not decided here (byte_stream.hpp sniffs each file).
#include <string>
#include <vector>

namespace data {

// False with *error naming the entry and what was expected: "'d/*.gz'
// matches no file", "'d': the folder holds no data file".
bool expand_inputs(const std::vector<std::string>& entries, std::vector<std::string>* files,
                   std::string* error);

} // namespace data
