#!/usr/bin/env bash
# Generates TypeScript for every .proto under proto/ into libs/proto/src/generated with ts-proto.
# `--check` regenerates into a temporary folder and fails when the checked-in code is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
out=libs/proto/src/generated
target=$out
if [ "${1:-}" = "--check" ]; then target=$(mktemp -d); fi
rm -rf "$target" && mkdir -p "$target"
mapfile -t files < <(cd proto && find . -name '*.proto' | sed 's|^\./||' | sort)
./node_modules/.bin/protoc \
  --plugin=protoc-gen-ts_proto=./node_modules/.bin/protoc-gen-ts_proto \
  --ts_proto_out="$target" \
  --ts_proto_opt=outputServices=grpc-js,esModuleInterop=true,env=node,useOptionals=messages,forceLong=number,oneof=unions-value \
  -I proto "${files[@]}"
# gRPC serializers encode with libs/proto/src/message-writer.ts and hand grpc-js a view of the
# bytes: ts-proto writes `Buffer.from(X.encode(value).finish())`, and BinaryWriter reserves 3 bytes
# per character of a string (zero-filled), copies on each growth and again in finish(); a multi-MB
# Classify call touched ~6× its size in fresh memory on the event loop (~3.3 ms per MB on these VMs;
# issue 17). Every file with a service is at the same depth under generated/.
find "$target" -name '*.ts' -exec perl -0pi -e \
  's/Buffer\.from\((\w+)\.encode\(value\)\.finish\(\)\)/encodeMessage($1, value)/g and s/^(import \{ BinaryWriter, BinaryReader \}|import \{ BinaryReader, BinaryWriter \})(.*\n)/$1$2import { encodeMessage } from "..\/..\/..\/..\/message-writer";\n/m' {} +
if [ "${1:-}" = "--check" ]; then
  if ! diff -r "$out" "$target" >/dev/null; then
    diff -r "$out" "$target" | head -n 40
    echo "libs/proto/src/generated is stale: run 'npm run codegen' and commit the result" >&2
    rm -rf "$target"; exit 1
  fi
  rm -rf "$target"; echo "generated code is current"
fi
