#!/usr/bin/env bash
# scripts/render-dump draws a festival.dump() as a PNG: a real PNG file (its
# signature and header), of a non-trivial size, with the colours of every
# level; --index alone finds the newest dumped snapshot, --points adds the
# source's objects; a snapshot of another index, an unknown snapshot and a
# snapshot without a dump are refused with a message and a non-zero exit; an
# LB-Grid dump (regions, logical buckets) is drawn too.
source "$(dirname "$0")/lib/tap.bash"

RENDER="$(cd "$(dirname "$0")/../.." && pwd)/scripts/render-dump"
fresh_database festival_render
tap_plan 23

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

q <<'SQL' >/dev/null
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SELECT festival.create_device('render', io => 'buffered');
CREATE TABLE objs AS
    SELECT i::bigint AS id,
           CASE WHEN i % 4 = 0
                THEN ST_MakeEnvelope(i % 97, (i * 13) % 89, i % 97 + 3, (i * 13) % 89 + 2)
                ELSE ST_MakePoint((i * 7) % 101, (i * 11) % 103) END AS geom
    FROM generate_series(1, 3000) i;
CREATE UNIQUE INDEX ON objs (id);
SELECT festival.create_index('rd', 'rtree', 'render', '{"page_size": 1024}', 'objs');
SELECT festival.build('rd');
SELECT festival.create_index('rd_other', 'rtree', 'render', '{"page_size": 1024, "split": "linear"}', 'objs');
SELECT festival.build('rd_other');
CREATE TABLE pts AS SELECT id, geom FROM objs WHERE GeometryType(geom) = 'POINT';
CREATE UNIQUE INDEX ON pts (id);
SELECT festival.create_index('rd_lb', 'lbgrid', 'render', '{"page_size": 1024}', 'pts');
SELECT festival.build('rd_lb');
SQL
snap=$(qv -c "SELECT festival.dump('rd')")
height=$(qv -c "SELECT height FROM festival.index_snapshot WHERE snapshot_id = $snap")
undumped=$(qv -c "SELECT festival.snapshot('rd_other')")
echo "# snapshot $snap (height $height), undumped snapshot $undumped"

png_signature() { head -c 8 "$1" | od -An -tx1 | tr -d ' \n'; }
# width and height from the IHDR chunk (big-endian at bytes 16 and 20)
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8 }'; }
# for colours 0..n of matplotlib's tab10 (level k is drawn in colour k),
# whether the picture has pixels of exactly that colour: "1 1 1 0"
png_level_colours() {
    /usr/bin/python3 -c '
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.image as mi
import matplotlib.pyplot as plt
a = (mi.imread(sys.argv[1])[:, :, :3] * 255).round().astype(int)
cmap = plt.get_cmap("tab10")
print(" ".join(str(int(bool((a == [round(v * 255) for v in cmap(k)[:3]]).all(axis=2).any())))
               for k in range(int(sys.argv[2]) + 1)))' "$1" "$2"
}

out=$("$RENDER" --snapshot "$snap" --output "$work/tree.png" 2>&1)
tap_is "$?" "0" "render-dump exits 0"
tap_like "$out" "wrote .*tree.png: snapshot $snap of rd" "it says what it wrote"
tap_is "$(png_signature "$work/tree.png")" "89504e470d0a1a0a" "the file has the PNG signature"
bytes=$(stat -c %s "$work/tree.png")
tap_ok "$( [ "$bytes" -gt 20000 ]; echo $?)" "the PNG is not trivial ($bytes bytes)"
dims=$(png_size "$work/tree.png")
tap_like "$dims" '^[0-9]{3,4}x[0-9]{3,4}$' "the PNG header gives a picture of hundreds of pixels ($dims)"
expected_colours="$(printf '1 %.0s' $(seq 1 "$height"))0"
tap_is "$(png_level_colours "$work/tree.png" "$height")" "$expected_colours" \
    "the picture shows the colour of each of the $height levels and no other level's"

out=$("$RENDER" --index rd --points --output "$work/points.png" --size 6 --dpi 80 2>&1)
tap_like "$out" "snapshot $snap of rd, [0-9]+ nodes and 3000 objects" "--index finds the dumped snapshot; --points draws the 3000 objects"
tap_is "$(png_signature "$work/points.png")" "89504e470d0a1a0a" "the picture with points is a PNG"
tap_ok "$(cmp -s "$work/tree.png" "$work/points.png"; [ $? -ne 0 ]; echo $?)" "it differs from the first picture"

out=$("$RENDER" --snapshot "$snap" --index rd_other --output "$work/bad.png" 2>&1)
tap_ok "$( [ $? -ne 0 ]; echo $?)" "a snapshot of another index is refused"
tap_like "$out" "snapshot $snap belongs to index \"rd\", not to \"rd_other\"" "with a message naming both indices"

out=$("$RENDER" --snapshot 999999 --output "$work/bad.png" 2>&1)
tap_like "$out" 'snapshot 999999 does not exist' "an unknown snapshot is refused"

out=$("$RENDER" --snapshot "$undumped" --output "$work/bad.png" 2>&1)
tap_like "$out" "snapshot $undumped has no dump; run SELECT festival.dump" "a snapshot without a dump is refused with a hint"
tap_ok "$( [ ! -e "$work/bad.png" ]; echo $?)" "refused renders write no file"

# LB-Grid: regions as polygons, logical buckets at level 0
lbsnap=$(qv -c "SELECT festival.dump('rd_lb')")
lbheight=$(qv -c "SELECT height FROM festival.index_snapshot WHERE snapshot_id = $lbsnap")
out=$("$RENDER" --snapshot "$lbsnap" --points --output "$work/lbgrid.png" 2>&1)
tap_like "$out" "wrote .*lbgrid.png: snapshot $lbsnap of rd_lb" "render-dump draws an lbgrid dump"
tap_is "$(png_signature "$work/lbgrid.png")" "89504e470d0a1a0a" "the lbgrid picture is a PNG"
tap_is "$(png_level_colours "$work/lbgrid.png" "$lbheight")" "$(printf '1 %.0s' $(seq 1 "$lbheight"))0" \
    "the lbgrid picture shows each of its $lbheight levels (buckets, sub-directories, root)"

# a tiered index (docs/tiers.md) under "level": --by-tier draws the inner
# nodes in the fast tier's red and the leaves in the slow tier's blue
# (tab10 colours 3 and 0), and nothing in the level colours between
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('render_fast', io => 'buffered')" \
  -c "SELECT festival.create_index('rd_tier', 'rtree', 'render', '{\"page_size\": 1024, \"fast_device\": \"render_fast\", \"placement\": \"level\"}', 'objs')" \
  -c "SELECT festival.build('rd_tier')" >/dev/null
tsnap=$(qv -c "SELECT festival.dump('rd_tier')")
tap_is "$(qv -c "SELECT string_agg(DISTINCT (level > 0)::text || '=' || tier, ',') FROM festival.index_node WHERE snapshot_id = $tsnap")" \
    "false=slow,true=fast" "the dump records each node's tier: inner nodes fast, leaves slow"
out=$("$RENDER" --index rd_tier --by-tier --output "$work/tier.png" --size 6 --dpi 80 2>&1)
tap_is "$?" "0" "--by-tier renders a tiered index"
tap_is "$(png_level_colours "$work/tier.png" 3)" "1 0 0 1" "in the tiers' blue and red only"
out=$("$RENDER" --index rd --by-tier --output "$work/bad.png" 2>&1)
tap_like "$out" 'was on one device when dumped: --by-tier needs a tiered index' "--by-tier on a one-device index is refused"

# an index that does not exist is named as such (not "has no dumped snapshot")
out=$("$RENDER" --index rd_no_such_index --output "$work/none.png" 2>&1)
tap_is "$?" "1" "--index of a missing index fails"
tap_like "$out" 'no index is named "rd_no_such_index"' "and says there is no such index"

q -c "SELECT festival.drop_index('rd')" -c "SELECT festival.drop_index('rd_other')" \
  -c "SELECT festival.drop_index('rd_lb')" -c "SELECT festival.drop_index('rd_tier')" \
  -c "SELECT festival.drop_device('render')" -c "SELECT festival.drop_device('render_fast')" >/dev/null
tap_done
