#!/usr/bin/env bash
# Builds fastloop's OCI image without Docker or a registry (`npm run image:build`):
#
#   1. /app: the five bundles and the runtime externals, staged by deploy/build-bundles.mjs --stage
#      (the same step the Dockerfile runs, so both images hold the same files);
#   2. a Debian bookworm root filesystem made by mmdebstrap from Debian's packages: the `essential`
#      variant (no apt, no compiler) plus libstdc++6 (node needs it), merged /usr without the
#      usrmerge package (which would pull in perl), no docs, man pages or locales;
#   3. Node 24 from the npm `node` package this checkout pins (node_modules/node/bin/node), as
#      /usr/local/bin/node like the official node image;
#   4. user fastloop (10001:10001), root-owned code, /app/.fastloop writable by the user;
#   5. umoci packs it as one layer and applies the run-time configuration of the Dockerfile's last
#      stage (ENV, WORKDIR, USER, EXPOSE, ENTRYPOINT, CMD: deploy/image/dockerfile-config.ts).
#
# Output: $FASTLOOP_IMAGE_DIR (default .fastloop/image)/fastloop-<tag>.oci.tar, an oci-archive
# (`podman load -i`, `skopeo copy oci-archive:<file> docker://<registry>/fastloop:<tag>`).
# Needs root (mmdebstrap's root mode and umoci keep file ownership as is), mmdebstrap and umoci
# (Debian: apt-get install mmdebstrap umoci), and the Debian mirror (MMDEBSTRAP_MIRROR, default
# http://deb.debian.org/debian).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

tag=${FASTLOOP_IMAGE_TAG:-dev}
out=${FASTLOOP_IMAGE_DIR:-$repo/.fastloop/image}
mirror=${MMDEBSTRAP_MIRROR:-http://deb.debian.org/debian}
node_bin=$repo/node_modules/node/bin/node

fail() {
  printf 'image:build: %s\n' "$*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "needs root: mmdebstrap (root mode) and umoci must create files owned by root and by uid 10001"
for tool in mmdebstrap umoci; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (Debian: apt-get install mmdebstrap umoci)"
done
[ -x "$node_bin" ] || fail "$node_bin is missing: run npm ci (the npm 'node' package is a pinned devDependency)"
node_version=$("$node_bin" --version)
case "$node_version" in v24.*) ;; *) fail "node_modules/node is $node_version, expected Node 24" ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/fastloop-image-XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$SECONDS

echo "==> staging /app (bundles + runtime externals)"
"$node_bin" deploy/build-bundles.mjs --stage "$work/app"

echo "==> image configuration from deploy/Dockerfile"
mapfile -d '' config_args < <("$node_bin" --import tsx deploy/image/dockerfile-config.ts)
[ "${#config_args[@]}" -gt 0 ] || fail "could not read the runtime configuration from deploy/Dockerfile"

echo "==> empty OCI layout"
oci=$work/oci
umoci init --layout "$oci"
umoci new --image "$oci:$tag"
umoci unpack --image "$oci:$tag" "$work/bundle" >/dev/null

echo "==> Debian bookworm root filesystem (mmdebstrap, essential + libstdc++6) with node $node_version and /app"
# Hooks run outside the chroot with the root filesystem as $1.
if ! mmdebstrap --quiet --mode=root --variant=essential --include=libstdc++6 \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --customize-hook="install -D -m 0755 '$node_bin' \"\$1/usr/local/bin/node\"" \
  --customize-hook="cp -a '$work/app' \"\$1/app\"" \
  --customize-hook='chown -R 0:0 "$1/app"' \
  --customize-hook='echo "fastloop:x:10001:" >> "$1/etc/group"' \
  --customize-hook='echo "fastloop:x:10001:10001:fastloop:/app:/usr/sbin/nologin" >> "$1/etc/passwd"' \
  --customize-hook='echo "fastloop:!:1::::::" >> "$1/etc/shadow"' \
  --customize-hook='install -d -o 10001 -g 10001 -m 0750 "$1/app/.fastloop"' \
  --customize-hook='rm -rf "$1"/var/cache/* "$1"/var/log/* "$1"/var/lib/dpkg/*-old "$1"/tmp/*' \
  bookworm "$work/bundle/rootfs" "$mirror" >"$work/mmdebstrap.log" 2>&1; then
  tail -n 40 "$work/mmdebstrap.log" >&2
  fail "mmdebstrap failed (last lines above; is $mirror reachable?)"
fi

echo "==> packing the layer and the configuration (umoci)"
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
version=$("$node_bin" -p "require('./package.json').version")
umoci repack --image "$oci:$tag" "$work/bundle" >/dev/null
umoci config --image "$oci:$tag" --no-history \
  --config.env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  "${config_args[@]}" \
  --config.label=org.opencontainers.image.title=fastloop \
  --config.label=org.opencontainers.image.version="$version" \
  --config.label=org.opencontainers.image.revision="$revision" \
  --config.label=org.opencontainers.image.base.name=debian:bookworm \
  --config.label=dev.fastloop.node.version="$node_version"
umoci gc --layout "$oci"

mkdir -p "$out"
archive=$out/fastloop-$tag.oci.tar
tar -C "$oci" -cf "$archive.partial" . && mv "$archive.partial" "$archive"
unpacked=$(du -sb "$work/bundle/rootfs" | cut -f1)
printf '==> %s: %s MiB (compressed layer), %s MiB unpacked, built in %s s\n' \
  "$archive" "$(($(stat -c %s "$archive") / 1048576))" "$((unpacked / 1048576))" "$((SECONDS - started))"
