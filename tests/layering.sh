#!/usr/bin/env bash
# model/ is pure math and data/ is plain std: neither may include CAF, spdlog
# or anything from the layers above them; checkpoint/ (the file format) sits
# on model/ and includes neither CAF, spdlog nor the layers above. Fails
# listing each offending line.
set -u
root=${1:?usage: layering.sh SOURCE_DIR}
bad=$(grep -nE '#include *[<"](caf/|spdlog/|runtime/|actors/|messages/|tools/)' \
        "$root"/model/*.?pp "$root"/data/*.?pp "$root"/checkpoint/*.?pp 2>/dev/null)
bad_model=$(grep -nE '#include *[<"](data/)' "$root"/model/*.?pp 2>/dev/null)
if [ -n "$bad$bad_model" ]; then
  echo "layering violation (model/, data/ and checkpoint/ must not include these):"
  echo "$bad$bad_model"
  exit 1
fi
# One style of invariant check: SS_CHECK (model/check.hpp), which Release
# keeps; a plain assert would vanish under NDEBUG.
asserts=$(grep -nE '(^|[^_[:alnum:]])assert *\(|#include *<cassert>' "$root"/{model,data,checkpoint,messages,actors,runtime,tools}/*.?pp 2>/dev/null)
if [ -n "$asserts" ]; then
  echo "use SS_CHECK (model/check.hpp), not assert (compiled out in Release):"
  echo "$asserts"
  exit 1
fi
n=$(ls "$root"/model/*.?pp "$root"/data/*.?pp "$root"/checkpoint/*.?pp | wc -l)
echo "layering ok: $n files in model/, data/ and checkpoint/ checked"
