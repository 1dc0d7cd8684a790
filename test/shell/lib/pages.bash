# shellcheck shell=bash
# test/shell/lib/pages.bash: index files checked page by page, independently
# of festival (sourced after tap.bash).

# verify_pages <file> <page size>: "pages=N zero=Z bad=B", B the pages
# whose stored checksum (the little-endian first 4 bytes) is not the
# CRC32C of their bytes [4, page size), computed here in Python, a table
# per byte; Z the pages of zeros (never written).
verify_pages() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
table = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    table.append(c)
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = table[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
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
