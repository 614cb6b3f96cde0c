#!/usr/bin/env bash
# Builds the CPython an installed agent brings into its layer when the task's image has none new enough (openhands
# needs Python >= 3.12, Debian bookworm has 3.11). This machine reaches Debian's archive but not python.org, and PyPI
# serves no relocatable CPython: so Debian's orig tarball of python3.13 (upstream's release, checked by its SHA-256)
# is fetched on the host and built inside a berth-base:bookworm container, linked against bookworm's glibc, for the
# fixed prefix it runs from in every layer. The libraries its modules link (OpenSSL, libffi, SQLite, zlib, ...)
# are copied beside it and found through its RPATH, so the task's image needs only glibc.
#
#   scripts/build-cpython.sh OUT_DIR     # OUT_DIR/prefix/ is the install, OUT_DIR/glibc its glibc (e.g. 2.36)
#
# Idempotent: an OUT_DIR holding .complete is left as it is; a build killed halfway leaves only a .partial folder,
# removed by the next run. One build at a time per OUT_DIR (flock).
set -euo pipefail

VERSION="3.13.15"
SERIES="3.13"
PREFIX="/opt/berth/python${SERIES}"
TARBALL="python${SERIES}_${VERSION}.orig.tar.xz"
SHA256="1e66a7945a48390ee4c2a4268a0e4185884059a13c4aab6d148aa208deea4a76"
SOURCE_URL="http://deb.debian.org/debian/pool/main/p/python${SERIES}/${TARBALL}"
BUILD_IMAGE="${BERTH_CPYTHON_BUILD_IMAGE:-berth-base:bookworm}"

out="${1:?usage: build-cpython.sh OUT_DIR}"
[ -f "$out/.complete" ] && exit 0
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9
[ -f "$out/.complete" ] && exit 0

src_dir="$(dirname "$out")/src"
mkdir -p "$src_dir"
if ! echo "$SHA256  $src_dir/$TARBALL" | sha256sum -c --status 2>/dev/null; then
  curl -sSf --retry 3 -o "$src_dir/$TARBALL.part" "$SOURCE_URL"
  echo "$SHA256  $src_dir/$TARBALL.part" | sha256sum -c --status || { echo "build-cpython: $SOURCE_URL does not have SHA-256 $SHA256" >&2; exit 1; }
  mv "$src_dir/$TARBALL.part" "$src_dir/$TARBALL"
fi

partial="$out.partial"
rm -rf "$partial" "$out"
mkdir -p "$partial"
name="berth-cpython-build-$$-$(date +%s)"
# Build packages come from Debian's archive inside the build container (the same bookworm the result links against).
docker run --rm --name "$name" --label berth.tool-build=cpython \
  -v "$src_dir/$TARBALL:/src.tar.xz:ro" -v "$partial:/out" "$BUILD_IMAGE" \
  nice -n 19 bash -euo pipefail -c "
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends build-essential pkg-config libssl-dev zlib1g-dev libffi-dev libsqlite3-dev \
      libbz2-dev liblzma-dev uuid-dev libreadline-dev libncurses-dev >/dev/null
    mkdir /build && tar -xJf /src.tar.xz -C /build --strip-components=1 && cd /build
    ./configure -q --prefix=$PREFIX --without-ensurepip --without-system-libmpdec \
      LDFLAGS='-Wl,-rpath,$PREFIX/lib -Wl,--disable-new-dtags'
    make -s -j\$(nproc) >/dev/null
    make -s install DESTDIR=/stage >/dev/null
    root=/stage$PREFIX
    # What only a developer of CPython uses.
    rm -rf \$root/lib/python$SERIES/test \$root/lib/python$SERIES/idlelib \$root/lib/python$SERIES/tkinter \$root/lib/python$SERIES/turtledemo \
      \$root/lib/python$SERIES/config-$SERIES-*/*.a \$root/lib/libpython$SERIES.a
    # Every library the interpreter and its modules link, except glibc's own, beside them.
    for f in \$root/bin/python$SERIES \$root/lib/python$SERIES/lib-dynload/*.so; do ldd \"\$f\"; done \
      | awk '\$2 == \"=>\" && \$3 ~ /^\\// { print \$3 }' | sort -u \
      | grep -vE '/(libc|libm|libpthread|libdl|librt|libutil|libresolv|ld-linux[^/]*)\\.so' \
      | while read -r lib; do cp -L \"\$lib\" \$root/lib/; done
    strip -s \$root/bin/python$SERIES \$root/lib/python$SERIES/lib-dynload/*.so \$root/lib/*.so* 2>/dev/null || true
    # Every module must import with only these files (a missing library is found here, not in an agent's run).
    mv \$root /out/prefix
    getconf GNU_LIBC_VERSION | cut -d' ' -f2 > /out/glibc
    chown -R $(id -u):$(id -g) /out
  "
# Every module must load at the prefix from the copied libraries alone (a missing one is found here, not in a turn).
docker run --rm --label berth.tool-build=cpython -v "$partial/prefix:$PREFIX:ro" "$BUILD_IMAGE" sh -c "
  ldd $PREFIX/lib/python$SERIES/lib-dynload/_ssl*.so | grep -q '$PREFIX/lib/libssl' &&
  $PREFIX/bin/python$SERIES -c 'import ssl, ctypes, sqlite3, zlib, bz2, lzma, uuid, decimal, readline, hashlib, venv; print(ssl.OPENSSL_VERSION)'"
echo "$VERSION" > "$partial/version"
touch "$partial/.complete"
mv "$partial" "$out"
