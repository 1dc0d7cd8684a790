#!/usr/bin/env bash
# scripts/report on a fixture of festival.run rows: it writes report.md and
# real PNG charts (signature, header, non-trivial size); every median in its
# tables (elapsed time, device time, pages read, repetitions) equals the median
# computed independently in SQL (percentile_cont), and every gain over the
# baseline equals (baseline - candidate) / baseline * 100 computed in SQL;
# --format html writes an HTML page.  Then scripts/run-workload on a tiny
# real matrix: one labelled row per measured run, the settings in
# config.experiment, window answers equal to PostGIS brute force, and the
# report of those runs; bad experiments are refused with a message.
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
fresh_database festival_report
tap_plan 34

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

q -f "$ROOT/test/shell/fixtures/report_runs.sql" >/dev/null
nfix=$(qv -c "SELECT count(*) FROM festival.run WHERE label LIKE 'exp=fixture %'")
echo "# fixture: $nfix runs"

png_signature() { head -c 8 "$1" | od -An -tx1 | tr -d ' \n'; }
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8 }'; }
png_ok() {   # a PNG signature, a header of hundreds of pixels, more than 10 kB
    [ -f "$1" ] && [ "$(png_signature "$1")" = 89504e470d0a1a0a ] \
        && png_size "$1" | grep -Eq '^[0-9]{3,4}x[0-9]{3,4}$' \
        && [ "$(stat -c %s "$1")" -gt 10000 ]
}

out=$("$ROOT/scripts/report" --output "$work/r" --label 'exp=fixture %' --baseline '% device=hdd %' 2>&1)
tap_is "$?" "0" "report exits 0 on the fixture"
tap_like "$out" "wrote .*/report.md: $nfix runs, 24 configurations, [0-9]+ charts" "it says what it wrote"
md="$work/r/report.md"
tap_ok "$( [ -s "$md" ]; echo $?)" "report.md exists"
tap_like "$(grep -c '^## Workload: ' "$md")" '^2$' "one section per workload (build, windows)"

for chart in elapsed_workload_build elapsed_workload_windows_area_0.1 \
             device_workload_build device_workload_windows_area_0.1 \
             gain_workload_build io_per_height_workload_windows_area_0.1; do
    png_ok "$work/r/$chart.png"
    tap_ok "$?" "$chart.png is a PNG of hundreds of pixels and more than 10 kB"
done
tap_is "$(grep -c '](.*\.png)' "$md")" "$(ls "$work/r"/*.png | wc -l)" \
    "report.md embeds every chart it wrote"

# The Markdown tables, as "workload|configuration|runs|elapsed|device|pages read",
# numbers normalised to 6 decimals.  Columns are found by their header.
table_rows() {
    awk -F' [|] ' '
        /^## Workload: / { w = substr($0, 14); header = 0; next }
        /^### / { w = "" }
        w != "" && /^[|] configuration / {
            for (i = 1; i <= NF; i++) { h = $i; gsub(/^[|] | [|]$/, "", h); col[h] = i }
            header = 1; next }
        w != "" && header && /^[|] [a-z]/ {
            c = $1; sub(/^[|] /, "", c)
            d = $col["device s"]; sub(/ [|]$/, "", d)
            p = $col["pages read"]; sub(/ [|]$/, "", p)
            printf "%s|%s|%d|%.6f|%.6f|%.6f\n", w, c, $col["runs"], $col["elapsed s"], d, p
        }' "$1" | sort
}
sql_rows() {
    qv <<'SQL' | sort
SELECT format('%s|%s|%s|%s|%s|%s', workload, config, n,
              to_char(wall, 'FM999990.000000'), to_char(dev, 'FM999990.000000'),
              to_char(pr, 'FM99999990.000000'))
FROM (
    SELECT substring(key FROM 'workload=.*$') AS workload,
           btrim(regexp_replace(regexp_replace(regexp_replace(key, '^exp=\S+ ', ''), ' workload=.*$', ''),
                                '(structure=rtree|framework=none|build=insert) ?', '', 'g')) AS config,
           count(*) AS n,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_seconds)::numeric AS wall,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY (metrics ->> 'device_seconds')::float8)::numeric AS dev,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY pages_read)::numeric AS pr
    FROM (SELECT *, regexp_replace(label, ' rep=\S+', '') AS key
          FROM festival.run WHERE label LIKE 'exp=fixture %') r
    GROUP BY key
) m;
SQL
}
table_rows "$md" >"$work/md.txt"
sql_rows >"$work/sql.txt"
tap_is "$(wc -l <"$work/md.txt")" "24" "the tables have one row per configuration (24)"
diff "$work/md.txt" "$work/sql.txt" >"$work/diff.txt"
tap_ok "$?" "every table row (runs, median elapsed, device time, pages read) equals SQL's medians"
[ -s "$work/diff.txt" ] && sed 's/^/#   /' "$work/diff.txt" | head -10
tap_like "$(grep -F 'split=linear page=2048 device=ssd|' "$work/md.txt" | grep '^workload=build|')" \
    '\|2\|' "the configuration with two repetitions shows 2 runs (median of an even count)"

# Gains: every ssd configuration against the hdd one, elapsed time, 3 significant digits.
gains_md() {
    awk -F' [|] ' '
        /^### Gains over the baseline: / { w = substr($0, 30); next }
        /^## / { w = "" }
        w != "" && /^[|] split/ { c = $1; sub(/^[|] /, "", c); printf "%s|%s|%s\n", w, c, $3 }' "$1" | sort
}
gains_sql() {
    qv <<'SQL' | sort
CREATE FUNCTION pg_temp.sig3(v float8) RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN v = 0 THEN '0' ELSE
        round(v::numeric, greatest(0, 2 - floor(log(abs(v::numeric)))::int))::text END $$;
WITH m AS (
    SELECT regexp_replace(label, ' rep=\S+', '') AS key,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_seconds) AS wall
    FROM festival.run WHERE label LIKE 'exp=fixture %' GROUP BY 1
)
SELECT format('%s|%s|%s', substring(c.key FROM 'workload=.*$'),
              btrim(regexp_replace(regexp_replace(regexp_replace(c.key, '^exp=\S+ ', ''), ' workload=.*$', ''),
                                   '(structure=rtree|framework=none|build=insert) ?', '', 'g')),
              pg_temp.sig3((b.wall - c.wall) / b.wall * 100))
FROM m c JOIN m b ON b.key = replace(c.key, ' device=ssd ', ' device=hdd ')
WHERE c.key LIKE '% device=ssd %';
SQL
}
gains_md "$md" >"$work/gmd.txt"
gains_sql >"$work/gsql.txt"
tap_is "$(wc -l <"$work/gmd.txt")" "12" "twelve candidates (ssd) have a baseline (hdd)"
diff "$work/gmd.txt" "$work/gsql.txt" >"$work/gdiff.txt"
tap_ok "$?" "every elapsed-time gain equals (baseline - candidate) / baseline * 100 from SQL"
[ -s "$work/gdiff.txt" ] && sed 's/^/#   /' "$work/gdiff.txt" | head -10
tap_like "$(grep -F 'every key both have except' "$md")" 'except device\.' \
    "the report says candidates differ from their baseline only in device"
tap_like "$(grep -F 'Every configuration:' "$md")" '^Every configuration: structure=rtree framework=none build=insert ' \
    "the keys every configuration shares are said once, not in every row (issue 28 item 6)"
out=$("$ROOT/scripts/report" --output "$work/k" --label 'exp=fixture %' --baseline 'device=hdd' 2>&1)
gains_md "$work/k/report.md" >"$work/gk.txt"
tap_ok "$(diff -q "$work/gk.txt" "$work/gsql.txt" >/dev/null; echo $?)" \
    "--baseline device=hdd (a key, not a LIKE pattern) pairs and computes the same gains"

out=$("$ROOT/scripts/report" --output "$work/h" --label 'exp=fixture %' --format html 2>&1)
tap_like "$(head -c 200 "$work/h/report.html" 2>/dev/null)" '<!DOCTYPE html>' "--format html writes report.html ($out)"

out=$("$ROOT/scripts/report" --output "$work/none" --label 'no such label%' 2>&1)
tap_ok "$( [ $? -ne 0 ]; echo $?)" "a pattern matching no run is refused"
tap_like "$out" "no run in festival.run has a label like 'no such label%'" "with a message naming the pattern"

# A tiny real experiment through scripts/run-workload.
out=$("$ROOT/scripts/run-workload" --no-setup --name tiny --points 3000 --seed 7 \
      --structure rtree:split=linear --page-sizes 1024,4096 \
      --device 'wl_test:io=buffered' --windows 0.5 --window-count 10 \
      --knn 5 --knn-count 5 --reps 2 --warmup 1 2>&1)
tap_is "$?" "0" "run-workload runs a tiny matrix"
tap_like "$out" '\[2/2\] ETA' "it shows progress (configuration i of n, ETA)"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label LIKE 'exp=tiny %'")" "12" \
    "2 page sizes x (build, windows, kNN) x 2 repetitions = 12 runs"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label ~ '^exp=tiny structure=rtree split=linear framework=none page=(1024|4096) device=wl_test build=insert workload=(build|windows area=0.5|knn k=5) rep=[12]\$' AND (config -> 'experiment' ->> 'rep')::int = substring(label FROM 'rep=(\d+)')::int")" "12" \
    "every label is structured and config.experiment holds the settings"
tap_like "$out" 'every configuration: split=linear framework=none device=wl_test build=insert' \
    "run-workload names the keys every configuration shares once (issue 28 item 6)"
tap_like "$(grep -E '^\[[0-9]/2\]' <<<"$out")" '^\[1/2\] .*exp=tiny structure=rtree page=1024$' \
    "and its progress lines show what varies, without rep="
tap_is "$(qv -c "SELECT count(*) FROM festival.compare('exp=tiny page=1024 workload=build', 'exp=tiny page=4096 workload=build')")" "16" \
    "festival.compare names a configuration by the keys that vary and takes both repetitions"
brute=$(qv -c "SELECT count(*) FROM wl_tiny_windows_0 w JOIN wl_tiny_points p ON ST_Intersects(p.geom, w.geom)")
tap_is "$(qv -c "SELECT DISTINCT config -> 'experiment' ->> 'result' FROM festival.run WHERE label LIKE 'exp=tiny % workload=windows %'")" \
    "$brute" "every window run found the PostGIS brute-force answer count ($brute)"
# one seed, one stream: the SQL generators with seed 7 make the same points
# and windows, so a SQL script finds the same answers (issue 28 item 9)
sqlcount=$(qv -c "SELECT festival.generate_points('sql_pts', 3000, 'uniform', 7, ST_MakeBox2D(ST_MakePoint(0, 0), ST_MakePoint(100000, 100000)))" \
              -c "SELECT festival.generate_windows('sql_win', 10, 0.5, ST_MakeBox2D(ST_MakePoint(0, 0), ST_MakePoint(100000, 100000)), 7)" \
              -c "SELECT count(*) FROM sql_win w JOIN sql_pts p ON ST_Intersects(p.geom, w.geom)" | tail -n 1)
tap_is "$(qv -c "SELECT count(*) FROM wl_tiny_windows_0 a FULL JOIN sql_win b USING (id) WHERE a.id IS NULL OR b.id IS NULL OR NOT ST_Equals(a.geom, b.geom)")" \
    "0" "run-workload's windows are festival.generate_windows's with the same seed"
tap_is "$sqlcount" "$brute" "a SQL script with seed 7 finds the runs' answer count ($brute)"
out=$("$ROOT/scripts/report" --output "$work/t" --label 'exp=tiny %' 2>&1)
png_ok "$work/t/elapsed_workload_windows_area_0.5.png"
tap_ok "$?" "the report of the real runs draws the elapsed-time chart ($out)"

out=$("$ROOT/scripts/run-workload" --no-setup --name bad --device 'wl_prof:kind=memory:profile=no_such_profile' 2>&1)
tap_like "$out" "device wl_prof.*profile" "a device with an unknown profile is refused with a message"

q -c "SELECT festival.drop_device('wl_test')" >/dev/null
tap_done
