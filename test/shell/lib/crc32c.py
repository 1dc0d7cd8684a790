"""CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) computed here, a
table per byte, independently of festival and of PostgreSQL's pg_crc32c:
what the shell tests check or re-seal festival's page checksums with
(test/shell/lib/pages.bash: pages_python runs Python with this directory
on its path)."""

TABLE = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    TABLE.append(c)


def crc32c(data):
    """The CRC-32C of data (bytes or bytearray)."""
    c = 0xFFFFFFFF
    for x in data:
        c = TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
