#!/usr/bin/env bash
# Page checksums (format/crc32c.c, format/page.h): every page festival
# writes carries the CRC32C of its bytes [4, page_size) in its first 4
# bytes, little-endian.  The checksum is computed over three interleaved
# streams joined by carry-less multiplication over the whole blocks of
# 4080 bytes, and by PostgreSQL's COMP_CRC32C over the rest; here a
# CRC32C computed independently (a table per byte, in Python) checks every page
# of indices whose page sizes exercise both paths and every kind of tail
# (1024: COMP_CRC32C; 4096: one block and 12 bytes; 4608: one block, 524;
# 8192: two blocks, 28; 12800: three blocks, 556; 65536: sixteen blocks,
# 252).  The same festival then reads them back: check() verifies every
# page, and a window after a reopen answers as PostGIS brute force.
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"
source "$(dirname "$0")/lib/pages.bash"

fresh_database festival_page_checksums
if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ] || ! command -v python3 >/dev/null; then
    tap_skip_all "needs a server on a local Unix socket (the test reads the index files) and python3"
fi
sizes="1024 4096 4608 8192 12800 65536"
tap_plan 24

scattered_points pts 30000
q <<'SQL' >/dev/null
SET client_min_messages = warning;
SELECT festival.create_device('pc', io => 'buffered');
SQL

window="ST_MakeEnvelope(20000, 30000, 45000, 52000)"
for size in $sizes; do
    # one build by insertion (every page written many times) and a flush
    q -c "SET client_min_messages = warning" \
      -c "SELECT festival.create_index('pc$size', 'rtree', 'pc', '{\"page_size\": $size, \"split\": \"quadratic\"}', 'pts')" \
      -c "SELECT festival.build('pc$size', 'insert')" -c "SELECT festival.flush('pc$size')" >/dev/null
    file=$(index_file pc$size)
    got=$(verify_pages "$file" "$size")
    tap_like "$got" "^pages=[1-9][0-9]* zero=0 bad=0$" "page size $size: every page's stored CRC32C is the independent one ($got)"
    tap_is "$(q -c "SELECT count(*) FROM festival.check('pc$size')")" 0 "page size $size: check() reads every page and finds no error"
    q -c "SELECT festival.close('pc$size')" >/dev/null
    tap_is "$(q -c "SELECT count(*) FROM festival.query('pc$size', $window) f
                    FULL JOIN (SELECT id FROM pts WHERE ST_Intersects(geom, $window)) b ON b.id = f.id
                    WHERE f.id IS NULL OR b.id IS NULL")" 0 "page size $size: after a reopen, a window answers as PostGIS brute force"
    tap_is "$(q -c "SELECT count(*) FROM festival.query('pc$size', $window)")" \
           "$(q -c "SELECT count(*) FROM pts WHERE ST_Intersects(geom, $window)")" "page size $size: as many rows as brute force"
done
