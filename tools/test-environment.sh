#!/usr/bin/env bash
# Prints what the tests depend on outside the repository, for Nx's cache key (nx.json
# sharedGlobals: a runtime input). A cached test result is replayed only when this output is the
# same: same model file (by content), same system tools (by path and version). Keep it fast: Nx
# runs it whenever it hashes a task.
cd "$(dirname "$0")/.." || exit 1
model=${FASTLOOP_TEST_MODEL:-../shared/models/stories260K.gguf}
if [ -f "$model" ]; then
  echo "model $(realpath "$model") $(sha256sum <"$model" | cut -c1-64)"
else
  echo "model absent: $model"
fi
for tool in kubectl kustomize redis-server python3 git; do
  path=$(command -v "$tool" 2>/dev/null) || path=absent
  echo "tool $tool $path"
done
[ "$(command -v kubectl)" ] && kubectl version --client 2>/dev/null | head -1
[ "$(command -v redis-server)" ] && redis-server --version 2>/dev/null | cut -d' ' -f1-3
exit 0
