#!/usr/bin/env bash
# Vendors the API explorer's assets (GET /docs) from the npm registry into
# src/http/explorer/vendor/, where the binary embeds them.
#
#   bash tools/explorer/update.sh                  # the pinned version
#   bash tools/explorer/update.sh 5.36.0 sha512-…  # another version
#
# The second argument is the tarball's integrity as the registry states it
# (`npm view swagger-ui-dist@<version> dist.integrity`); the download is
# checked against it. After an update, change the pins below, run the
# explorer check (README.md, "The API explorer's files") and commit the new
# files.
set -euo pipefail
cd "$(dirname "$0")/../.."

version="${1:-5.35.0}"
integrity="${2:-sha512-U06rpMtW9V3XPGOBeamTUSr0Z09jMX4IJuANpE/EZbAhw0G8CgwrzU4YmXkn/h0wCDNsXdGarTNNHC3sU8yVUQ==}"
dest=src/http/explorer/vendor
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

tarball="swagger-ui-dist-$version.tgz"
curl --fail --silent --show-error --max-time 120 \
  -o "$work/$tarball" "https://registry.npmjs.org/swagger-ui-dist/-/$tarball"
actual="sha512-$(openssl dgst -sha512 -binary "$work/$tarball" | base64 -w0)"
if [[ "$actual" != "$integrity" ]]; then
  echo "integrity mismatch for $tarball: got $actual, expected $integrity" >&2
  exit 1
fi
tar -xzf "$work/$tarball" -C "$work"

# Only what the page uses, with the licence and notice that come with it;
# source maps and the other bundles stay out of the binary.
rm -rf "$dest"
mkdir -p "$dest"
for file in swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css LICENSE NOTICE; do
  cp "$work/package/$file" "$dest/$file"
done
# Source-map comments would point developer tools at files not vendored.
sed -i -e 's|/\*# sourceMappingURL=[^*]*\*/||' -e '/^\/\/# sourceMappingURL=/d' \
  "$dest/swagger-ui-bundle.js" "$dest/swagger-ui.css"
printf 'swagger-ui-dist %s\n%s\n' "$version" "$integrity" > "$dest/VERSION"
echo "vendored swagger-ui-dist $version into $dest"
ls -l "$dest"
