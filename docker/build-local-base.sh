#!/bin/sh
# Builds the Node base image from Debian packages, for hosts that cannot pull node:24.x-bookworm-slim
# from a registry (as on the project's build machines): a debootstrap'ed Debian bookworm (minbase,
# ca-certificates, tini), the Node binary the `node` dev dependency installed (node_modules/node, the
# version the project pins) and the host's npm. Then build the app images on it:
#   sh docker/build-local-base.sh                     # -> localhost/node:<version>-bookworm-slim
#   podman build --format docker -f docker/Dockerfile --build-arg NODE_IMAGE=localhost/node:24.21.0-bookworm-slim \
#     --build-arg APP=platform-api -t localhost/backoffice/platform-api:dev .
# Needs root, debootstrap and podman (apt-get install debootstrap podman; on cgroup v1 hosts add runc
# and pass --runtime runc). Behind a TLS-intercepting proxy, NODE_EXTRA_CA_CERTS names the CA bundle
# to trust inside the image.
set -eu
cd "$(dirname "$0")/.."
node_bin=node_modules/node/bin/node
[ -x "$node_bin" ] || { echo "build-local-base: $node_bin is missing (npm install first)" >&2; exit 1; }
version=$("$node_bin" --version | sed 's/^v//')
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase --include=ca-certificates,tini bookworm "$work/rootfs" http://deb.debian.org/debian
install -m 0755 "$node_bin" "$work/rootfs/usr/local/bin/node"
mkdir -p "$work/rootfs/usr/local/lib/node_modules"
cp -a "$npm_dir" "$work/rootfs/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
extra_ca=""
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$work/rootfs/usr/local/share/extra-ca.crt"
  extra_ca="--change ENV=NODE_EXTRA_CA_CERTS=/usr/local/share/extra-ca.crt"
fi
# Slim like the official *-slim images: no docs, man pages or locales, now or from later apt installs
# (the app images' `apt-get install tini`), no apt caches or package lists.
printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
  'path-exclude /usr/share/man/*' 'path-exclude /usr/share/groff/*' 'path-exclude /usr/share/info/*' \
  'path-exclude /usr/share/locale/*' 'path-exclude /usr/share/lintian/*' >"$work/rootfs/etc/dpkg/dpkg.cfg.d/slim"
find "$work/rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
rm -rf "$work/rootfs/usr/share/man/"* "$work/rootfs/usr/share/info/"* "$work/rootfs/usr/share/locale/"*
rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin "$work/rootfs/var/cache/apt/archives/"*.deb
tar -C "$work/rootfs" -cf "$work/base.tar" .
# shellcheck disable=SC2086
podman import --change "ENV NODE_VERSION=$version" $extra_ca --change 'CMD ["node"]' "$work/base.tar" "localhost/node:$version-bookworm-slim"
echo "localhost/node:$version-bookworm-slim"
