#!/bin/sh
# Builds the two base images the Dockerfile uses, from Debian packages, for hosts that cannot pull from
# Docker Hub or gcr.io (as on the project's build machines), from one debootstrap'ed Debian bookworm:
#   localhost/node:<version>-bookworm-slim   the build stages' NODE_IMAGE: Debian minbase, ca-certificates,
#       tini, the Node binary the `node` dev dependency installed (node_modules/node, the version the
#       project pins) and the host's npm (what node:<version>-bookworm-slim holds);
#   localhost/distroless/cc-debian12         the runtime stage's RUNTIME_IMAGE, what
#       gcr.io/distroless/cc-debian12 holds: the files of Debian's libc6, libgcc-s1, libstdc++6, libssl3,
#       ca-certificates (and the bundle it generates), tzdata, netbase and base-files, an /etc/passwd
#       with root, nobody and nonroot (65532), /tmp; no shell, no package manager.
# Then:
#   sh docker/build-local-base.sh
#   npm run image:check -- --node-image localhost/node:24.21.0-bookworm-slim \
#     --runtime-image localhost/distroless/cc-debian12 --host-services
# Needs root, debootstrap and podman (apt-get install debootstrap podman; on cgroup v1 hosts add runc,
# docs/deploying.md "Images"). Behind a TLS-intercepting proxy, NODE_EXTRA_CA_CERTS names the CA bundle
# to trust inside the node image.
set -eu
cd "$(dirname "$0")/.."
node_bin=node_modules/node/bin/node
[ -x "$node_bin" ] || { echo "build-local-base: $node_bin is missing (npm install first)" >&2; exit 1; }
version=$("$node_bin" --version | sed 's/^v//')
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
debootstrap --variant=minbase --include=ca-certificates,tini,tzdata,netbase bookworm "$rootfs" http://deb.debian.org/debian

# The runtime base first, from the packages' own file lists (/var/lib/dpkg/info/<package>.list), before
# the node image's slimming deletes docs. bookworm merges /usr: /lib/... lives at /usr/lib/...
runtime="$work/runtime"
mkdir -p "$runtime/usr" "$runtime/etc/ssl/certs" "$runtime/home/nonroot"
for dir in bin sbin lib lib64; do [ -L "$rootfs/$dir" ] && cp -P "$rootfs/$dir" "$runtime/$dir"; done
for package in libc6 libgcc-s1 libstdc++6 libssl3 ca-certificates tzdata netbase base-files; do
  cat "$rootfs/var/lib/dpkg/info/$package.list" "$rootfs/var/lib/dpkg/info/$package:amd64.list" 2>/dev/null || true
done | sed -e 's#^/\(bin\|sbin\|lib\|lib64\)/#/usr/\1/#' -e 's#^/##' | grep -v -x -e '' -e bin -e sbin -e lib -e lib64 |
  sort -u >"$work/files"
tar -C "$rootfs" -cf - --no-recursion -T "$work/files" | tar -C "$runtime" -xpf -
cp "$rootfs/etc/ssl/certs/ca-certificates.crt" "$runtime/etc/ssl/certs/"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
  'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$runtime/etc/passwd"
printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' >"$runtime/etc/group"
echo 'hosts: files dns' >"$runtime/etc/nsswitch.conf"
chown 65532:65532 "$runtime/home/nonroot"
install -d -m 1777 "$runtime/tmp"
rm -rf "$runtime/usr/share/doc" "$runtime/usr/share/man" "$runtime/usr/share/lintian"
tar -C "$runtime" -cf "$work/runtime.tar" .
podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' "$work/runtime.tar" localhost/distroless/cc-debian12

install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/lib/node_modules"
cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
extra_ca=""
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$rootfs/usr/local/share/extra-ca.crt"
  extra_ca="--change ENV=NODE_EXTRA_CA_CERTS=/usr/local/share/extra-ca.crt"
fi
# Slim like the official *-slim images: no docs, man pages or locales, now or from later apt installs,
# no apt caches or package lists.
printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
  'path-exclude /usr/share/man/*' 'path-exclude /usr/share/groff/*' 'path-exclude /usr/share/info/*' \
  'path-exclude /usr/share/locale/*' 'path-exclude /usr/share/lintian/*' >"$rootfs/etc/dpkg/dpkg.cfg.d/slim"
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
rm -rf "$rootfs/usr/share/man/"* "$rootfs/usr/share/info/"* "$rootfs/usr/share/locale/"*
rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin "$rootfs/var/cache/apt/archives/"*.deb
tar -C "$rootfs" -cf "$work/base.tar" .
# shellcheck disable=SC2086
podman import --change "ENV NODE_VERSION=$version" $extra_ca --change 'CMD ["node"]' "$work/base.tar" "localhost/node:$version-bookworm-slim"
echo "localhost/node:$version-bookworm-slim localhost/distroless/cc-debian12"
