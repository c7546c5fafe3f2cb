#!/usr/bin/env bash
# The libraries' links make an include of a higher folder a build error
# (CMakeLists.txt, ss_layer); system headers are visible to every target, so
# this script checks them: model/ is pure math and data/ is plain std: neither
# may include CAF or spdlog; checkpoint/ (the file format) neither; config/,
# report/ and engine/ include no CAF. Fails listing each offending line.
set -u
root=${1:?usage: layering.sh SOURCE_DIR}
bad=$(grep -nE '#include *[<"](caf/|spdlog/)' \
        "$root"/model/*.?pp "$root"/data/*.?pp "$root"/checkpoint/*.?pp 2>/dev/null)
bad_caf=$(grep -nE '#include *[<"]caf/' "$root"/config/*.?pp "$root"/report/*.?pp \
            "$root"/engine/*.?pp 2>/dev/null)
if [ -n "$bad$bad_caf" ]; then
  echo "layering violation (model/, data/, checkpoint/: no CAF, no spdlog; config/, report/,"
  echo "engine/: no CAF):"
  echo "$bad$bad_caf"
  exit 1
fi
# The same layers for headers (a header no .cpp of its own library includes
# would escape the build's check): each folder includes only itself and the
# folders below it.
below() {
  case $1 in
    model|messages) echo "$1" ;;
    data) echo "data model" ;;
    checkpoint) echo "checkpoint data model" ;;
    config) echo "config checkpoint data model" ;;
    report) echo "report model" ;;
    engine) echo "engine report $(below config)" ;;
    actors) echo "actors messages checkpoint data model" ;;
    sim) echo "sim actors messages $(below engine)" ;;
    cluster) echo "cluster $(below sim)" ;;
    deploy) echo "deploy $(below cluster)" ;;
  esac
}
layers="model messages data checkpoint config report engine actors sim cluster deploy"
up=""
for f in $layers; do
  allowed=$(below "$f" | tr ' ' '|')
  hits=$(grep -nE "#include *\"($(echo $layers | tr ' ' '|')|tools)/" "$root/$f"/*.?pp 2>/dev/null \
           | grep -vE "#include *\"($allowed)/")
  [ -z "$hits" ] || up="$up$hits"$'\n'
done
if [ -n "$up" ]; then
  echo "layering violation (an include of a folder above or beside this one):"
  echo "$up"
  exit 1
fi
# One style of invariant check: SS_CHECK (model/check.hpp), which Release
# keeps; a plain assert would vanish under NDEBUG.
asserts=$(grep -nE '(^|[^_[:alnum:]])assert *\(|#include *<cassert>' "$root"/{model,data,checkpoint,messages,actors,config,report,engine,sim,cluster,deploy,tools}/*.?pp 2>/dev/null)
if [ -n "$asserts" ]; then
  echo "use SS_CHECK (model/check.hpp), not assert (compiled out in Release):"
  echo "$asserts"
  exit 1
fi
n=$(ls "$root"/{model,data,checkpoint,config,report,engine}/*.?pp | wc -l)
echo "layering ok: every folder includes only the folders below it; $n files of model/, data/,"
echo "checkpoint/, config/, report/ and engine/ include no CAF"
