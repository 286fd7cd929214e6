#!/usr/bin/env bash
# Lets a machine whose kernel cannot execute 32-bit x86 programs run them through qemu-user.
# npm test builds the C tests and fuzzers for 32 bits (-m32), where size_t is as narrow as in
# wasm. Some kernels run no i386 program ("Exec format error": seen on a Firecracker VM with
# a 6.18 kernel, whose IA32 emulation is off); there, binfmt_misc can hand every i386 ELF file
# to qemu-i386 (Debian's qemu-user), which runs them, AddressSanitizer included, more slowly.
# Needs root. Does nothing where i386 programs already run. Exit status 0 when they run after.
#   scripts/binfmt-i386.sh          (npm test runs it itself as root without a terminal; .ci/run too)
#   scripts/binfmt-i386.sh --check  (changes nothing: says whether they run, and why not)
set -euo pipefail
check=0
[ "${1:-}" = --check ] && check=1

probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
echo 'int main(void) { return sizeof(void *) == 4 ? 0 : 1; }' > "$probe_dir/p.c"
if ! cc -m32 "$probe_dir/p.c" -o "$probe_dir/p" 2>/dev/null; then
  echo "binfmt-i386.sh: cc -m32 cannot build a program: install gcc-multilib first" >&2
  exit 1
fi
runs() { "$probe_dir/p" 2>/dev/null; }
if runs; then exit 0; fi

if [ "$check" = 1 ] || [ "$(id -u)" != 0 ]; then
  echo "binfmt-i386.sh: this kernel does not run 32-bit programs; scripts/binfmt-i386.sh, as root, runs them through qemu-user" >&2
  exit 1
fi
echo "binfmt-i386.sh: this kernel does not run 32-bit programs; registering qemu-i386 for them with binfmt_misc"
if ! command -v qemu-i386 >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-user
fi
binfmt=/proc/sys/fs/binfmt_misc
[ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt"
# an i386 ELF executable or position-independent executable (e_type 2 or 3, e_machine 3);
# the kernel decodes the \x escapes; F opens qemu-i386 now, so it works in any mount namespace
if [ ! -e "$binfmt/qemu-i386" ]; then
  echo ':qemu-i386:M::\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00:\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$(command -v qemu-i386)"':F' > "$binfmt/register"
fi
if runs; then
  echo "binfmt-i386.sh: 32-bit programs now run through $(command -v qemu-i386)"
else
  echo "binfmt-i386.sh: 32-bit programs still do not run after registering qemu-i386" >&2
  exit 1
fi
