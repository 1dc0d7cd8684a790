#!/usr/bin/env bash
# festival.check() of an adaptive grid file (structure 'agrid') finds a
# bucket mode the pages contradict: a shared log page (records of several
# buckets) whose header says LB_PLACE_PAGE, the flag of a bucket's page of
# its own (docs/indices.md, adaptive grid file).  The flag is set in the
# closed file with a valid checksum (computed here, independently of
# festival), so only check()'s mode invariants can see it: an in-place page
# is the first page of exactly one bucket's list and holds only that
# bucket's points after its marker.  The untouched twin checks clean.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/pages.bash"

fresh_database festival_agrid_check
tap_plan 5
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('agc', io => 'buffered')" >/dev/null
for ix in agc_flag agc_twin; do
    q -c "SET client_min_messages = warning" \
      -c "SELECT festival.create_index('$ix', 'agrid', 'agc', '{\"page_size\": 1024, \"extent\": [0, 0, 1000, 1000]}')" \
      -c "SELECT count(festival.insert('$ix', i, ST_MakePoint((i * 7919) % 1000, (i * 104729) % 997))) FROM generate_series(1, 400) i" \
      -c "SELECT festival.close('$ix')" >/dev/null
done
file=$(qv -c "SELECT current_setting('data_directory') || '/festival/' || d.directory || '/' || i.file_name
              FROM festival.index i JOIN festival.device d ON d.name = i.device WHERE i.name = 'agc_flag'")

# the first log page holding records of two buckets gets LB_PLACE_PAGE
# (0x0002, flags at byte 18 of the page header) and a new CRC-32C (lib/crc32c.py)
out=$(pages_python - "$file" 1024 <<'PY'
import struct, sys
from crc32c import crc32c
path, size = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, 'rb').read())
for pno in range(2, len(data) // size):
    p = data[pno * size:(pno + 1) * size]
    level, flags, n = struct.unpack_from('<HHI', p, 16)
    if p.count(0) == size or level != 0 or not flags & 1:
        continue
    tags = {struct.unpack_from('<Q', p, 32 + 32 * k + 24)[0] & ~(1 << 63) for k in range(n)}
    if len(tags) < 2:
        continue
    struct.pack_into('<H', p, 18, flags | 2)
    struct.pack_into('<I', p, 0, crc32c(bytes(p[4:])))
    data[pno * size:(pno + 1) * size] = p
    open(path, 'r+b').write(data)
    print("flagged=%d buckets=%d" % (pno, len(tags)))
    break
PY
)
tap_like "$out" '^flagged=[0-9]+ buckets=([2-9]|[1-9][0-9]+)$' "a shared log page of the closed file is flagged in place ($out)"
page=$(echo "$out" | sed -n 's/^flagged=\([0-9]*\).*/\1/p')

out=$(q -c "SELECT 'verified=' || (SELECT count(*) FROM festival.query('agc_flag', ST_MakeEnvelope(0, 0, 1000, 1000)))" 2>&1)
tap_like "$out" '^verified=400$' "its checksum is valid: the index opens and answers"
out=$(q -c "SELECT severity || ' ' || coalesce(page::text, '-') || ' ' || message FROM festival.check('agc_flag')")
echo "$out" | sed 's/^/#   /'
tap_like "$out" "^error [0-9]+ the in-place page of a bucket is in bucket [0-9]+'s list at position [0-9]+, and in another list$" \
    "check() finds the page in the lists of several buckets"
tap_like "$out" "^error $page the in-place page of bucket [0-9]+ (does not begin with its marker|holds a record that is not one of its points)$" \
    "check() finds records of other buckets on the flagged page $page"
tap_is "$(qv -c "SELECT count(*) FROM festival.check('agc_twin')")" "0" "the untouched twin checks clean"

for ix in agc_flag agc_twin; do qv -c "SELECT festival.drop_index('$ix')" >/dev/null; done
psql -X -q -d postgres -c "DROP DATABASE festival_agrid_check" >/dev/null 2>&1
tap_done
