# Sourced by scripts/gpu-check.sh: where .gpu-debs/ was carried to the lent machine (see
# scripts/fetch-gpu-debs.sh), unpacks those Debian packages into a private prefix, never over
# the machine's own /usr, and points pkg-config, CMake and the loader at it.
# Usage: source scripts/use-carried-debs.sh [PREFIX]   (PREFIX defaults to /tmp/gpu-deps)
use_carried_debs() {
  local prefix=${1:-/tmp/gpu-deps} arch_lib f
  [ -d .gpu-debs ] || return 0
  arch_lib=$prefix/usr/lib/x86_64-linux-gnu
  rm -rf "$prefix"
  mkdir -p "$prefix"
  for f in .gpu-debs/*.deb; do
    case $(basename "$f") in
      # The machine's own zlib (Python needs one) must match the headers the build sees.
      zlib1g-dev_*) [ -e /usr/include/zlib.h ] && continue ;;
      # A libgfortran already there is newer than Debian 12's; keep it.
      libgfortran5_* | libquadmath0_*) ldconfig -p | grep -q 'libgfortran.so.5 ' && continue ;;
    esac
    dpkg-deb -x "$f" "$prefix"
  done
  # The .pc files name /usr/...; point them into the prefix.
  find "$prefix" -name '*.pc' -exec sed -i "s|/usr/|$prefix/usr/|g" {} +
  # Debian's libz.so links to its own versioned file, absent here: link the machine's libz.so.1.
  if [ -L "$arch_lib/libz.so" ]; then
    ln -sf "$(ldconfig -p | awk '/libz\.so\.1 /{print $NF; exit}')" "$arch_lib/libz.so"
  fi
  export PATH="$prefix/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$arch_lib/openblas-pthread:$arch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_PATH="$arch_lib/openblas-pthread/pkgconfig:$arch_lib/pkgconfig:$prefix/usr/share/pkgconfig"
  export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  echo "carried Debian packages unpacked into $prefix: $(ls .gpu-debs | wc -l) files"
}
