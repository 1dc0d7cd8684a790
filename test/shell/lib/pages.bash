# shellcheck shell=bash
# test/shell/lib/pages.bash: index files checked page by page, independently
# of festival (sourced after tap.bash).

# pages_python <python3 arguments>: python3 with this directory on its path,
# so that a test's Python imports crc32c (lib/crc32c.py, computed
# independently of festival) instead of carrying its own; no bytecode is
# written into the source tree.
PAGES_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pages_python() {
    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$PAGES_LIB_DIR${PYTHONPATH:+:$PYTHONPATH}" python3 "$@"
}

# verify_pages <file> <page size>: "pages=N zero=Z bad=B", B the pages
# whose stored checksum (the little-endian first 4 bytes) is not the
# CRC32C of their bytes [4, page size) (lib/crc32c.py); Z the pages of
# zeros (never written).
verify_pages() {
    pages_python - "$1" "$2" <<'PY'
import struct, sys
from crc32c import crc32c
size = int(sys.argv[2])
data = open(sys.argv[1], 'rb').read()
pages = zero = bad = 0
for off in range(0, len(data) - len(data) % size, size):
    p = data[off:off + size]
    pages += 1
    if p.count(0) == size:
        zero += 1
    elif struct.unpack('<I', p[:4])[0] != crc32c(p[4:]):
        bad += 1
print("pages=%d zero=%d bad=%d" % (pages, zero, bad))
PY
}
