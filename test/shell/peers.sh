#!/usr/bin/env bash
# experiments/peers.json (issue 14's table) as a smoke run: --scale 0.0005
# makes its 200k/1M/5M/20M points 100/500/2,500/10,000.  One invocation of
# scripts/run-workload --report runs festival, GiST and libspatialindex
# (PyPI rtree in a virtual environment) side by side and prints the table
# "festival / peers".  Checked independently: the number of runs equals the
# dry run's list; one-at-a-time builds stop at max_points (5M, scaled) while
# bulk loads go on to the largest size; every build ratio the table prints
# equals the ratio of medians computed in SQL from festival.run; every
# build carries a positive peak memory and the table's bytes per point is
# that peak over n; the catalog entry runs every structure of the registry
# (src/index/registry.c), gridfile included.
source "$(dirname "$0")/lib/tap.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
case "${PGHOST:-}" in
    /*|"") ;;
    *) tap_skip_all "peak memory is read from /proc: needs a local server" ;;
esac
fresh_database festival_peers_test
tap_plan 14

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(--no-setup --config "$ROOT/experiments/peers.json" --name peers_smoke --scale 0.0005
      --device wl_peers_smoke:io=buffered --reps 1 --warmup 0 --empty-count 200)

"$ROOT/scripts/run-workload" "${args[@]}" --dry-run >"$work/dry" 2>&1
planned=$(grep -c ' (1 repetition)$' "$work/dry")
"$ROOT/scripts/run-workload" "${args[@]}" --report "$work/r" >"$work/out" 2>&1
tap_is "$?" "0" "run-workload --report runs the smoke version of experiments/peers.json"
[ "$TAP_LAST_OK" -ne 0 ] && sed 's/^/#   /' "$work/out" | tail -20
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label LIKE 'exp=peers_smoke %'")" "$planned" \
    "one run per line of the dry run ($planned)"

out=$(cat "$work/out")
tap_like "$out" '^## festival / peers' "it prints the table festival / peers"
tap_like "$out" '^\| structure=rtree split=quadratic build=insert \| workload=build \| peer=gist \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|  \|$' \
    "quadratic one-at-a-time build / GiST INSERT at 100, 500, 2500 points, not at 10000"
tap_like "$out" '^\| structure=rstartree build=insert \| workload=build \| peer=libspatialindex variant=rstar \| [0-9.]+ \|' \
    "R*-tree build / libspatialindex R*"
tap_like "$out" '^\| structure=rtree cache=lru cache_size=128MB split=quadratic build=insert \| workload=empty \| peer=gist \| [0-9.]+ \(' \
    "the same build with a page cache (like GiST's shared buffers) has its own rows"
tap_like "$out" '^\| structure=rtree split=quadratic build=str \| workload=build \| peer=gist \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' \
    "STR bulk load / GiST CREATE INDEX up to 10000 points"
tap_like "$out" '^\| structure=xbrtree build=bulk \| workload=empty \| peer=gist \| [0-9.]+ \([0-9.]+ vs [0-9.]+ µs/call\)' \
    "empty windows per call against GiST"

# Every build ratio of the printed tables (elapsed, then backend CPU time)
# against medians from festival.run.
build_ratios() {   # build_ratios FIRST-LINE-REGEX: the build rows of the table after it
    awk -F' [|] ' -v start="$1" '
        $0 ~ start { on = 1; next }
        on && /^#/ { on = 0 }
        on && /^\| structure=.* \| workload=build \| / {
        c = $1; sub(/^\| /, "", c); p = $3; sub(/ variant=.*/, "", p)
        for (i = 4; i <= NF; i++) { v = $i; sub(/ *\|$/, "", v); if (v != "") printf "%s|%s|%d|%s\n", c, p, i - 3, v } }' "$work/out" | sort
}
medians_ratios() {   # medians_ratios COLUMN: the same ratios from festival.run
    qv <<SQL | sort
-- a ratio to 3 significant digits, as scripts/report prints it
CREATE FUNCTION pg_temp.sig3(v float8) RETURNS text LANGUAGE sql AS \$q\$
    SELECT CASE WHEN v = 0 THEN '0' ELSE
        round(v::numeric, greatest(0, 2 - floor(log(abs(v::numeric)))::int))::text END \$q\$;
WITH m AS (
    SELECT regexp_replace(regexp_replace(label, ' (framework=none|page=4096|device=wl_peers_smoke|n=\d+|workload=build|rep=\d+)', '', 'g'), '^exp=peers_smoke ', '') AS conf,
           substring(label FROM ' n=(\d+)')::int AS n,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY $1) AS t
    FROM festival.run WHERE label LIKE 'exp=peers_smoke % workload=build %' GROUP BY 1, 2
), sizes AS (SELECT n, row_number() OVER (ORDER BY n) AS col FROM (SELECT DISTINCT n FROM m) s)
SELECT format('%s|%s|%s|%s', f.conf, split_part(p.conf, ' ', 1), s.col,
              CASE WHEN f.t > 0 AND p.t > 0 THEN pg_temp.sig3(f.t / p.t) ELSE '-' END)
FROM m f JOIN m p USING (n) JOIN sizes s USING (n)
WHERE f.conf LIKE 'structure=%' AND (
      (p.conf = 'peer=gist build=insert' AND f.conf LIKE '% build=insert')
   OR (p.conf = 'peer=gist build=create_index' AND f.conf NOT LIKE '% build=insert')
   OR ('$1' = 'wall_seconds' AND p.conf = 'peer=libspatialindex variant=rstar build=insert'
       AND f.conf LIKE 'structure=rstartree %build=insert'));
SQL
}
printed=$(build_ratios '^## festival / peers')
computed=$(medians_ratios wall_seconds)
tap_is "$printed" "$computed" "every build ratio equals the ratio of the medians in festival.run"
printed=$(build_ratios '^### In backend CPU time')
computed=$(medians_ratios cpu_seconds)
tap_is "$printed" "$computed" "every build ratio in backend CPU time equals the ratio of the cpu_seconds medians (no libspatialindex row)"
tap_is "$(qv -c "SELECT count(*) FROM festival.run WHERE label LIKE 'exp=peers_smoke % build=insert n=10000 %'")" "0" \
    "no one-at-a-time build beyond max_points (5M scaled: 2500)"
tap_is "$(qv -c "SELECT count(*) FILTER (WHERE (config -> 'experiment' ->> 'peak_anon_bytes')::bigint > 0
                                           AND (config -> 'experiment' ->> 'vm_hwm_bytes')::bigint > 0)
                 = count(*) FROM festival.run
                 WHERE label LIKE 'exp=peers_smoke % workload=build %' AND label NOT LIKE '% peer=libspatialindex %'")" "t" \
    "every build (festival, GiST) has a positive peak memory"
# bytes per point of the xBR+ bulk load at 10000 points, as the report prints it
peak=$(qv -c "SELECT round((config -> 'experiment' ->> 'peak_anon_bytes')::numeric / 10000) FROM festival.run
              WHERE label LIKE 'exp=peers_smoke structure=xbrtree % n=10000 workload=build rep=1'")
tap_like "$(grep '^| structure=xbrtree build=bulk |' "$work/r/report.md" | tail -1)" "\| $peak B/pt, " \
    "the memory table's bytes per point at 10000 points is the peak over n ($peak)"

# The catalog: every structure of the registry, without naming them.
want=$(sed -n '/^static const StructureOps \*const structures\[\]/,/NULL/p' "$ROOT/src/index/registry.c" | grep -c '_structure,$')
"$ROOT/scripts/run-workload" --no-setup --name catalog_smoke --structure catalog --points 300 \
    --device wl_peers_smoke:io=buffered --windows none --reps 1 --warmup 0 >"$work/cat" 2>&1
got=$(qv -c "SELECT string_agg(DISTINCT substring(label FROM 'structure=(\S+)'), ',') FROM festival.run WHERE label LIKE 'exp=catalog_smoke %'")
has_gridfile=$(grep -Eq '(^|,)gridfile(,|$)' <<<"$got" && echo yes || echo no)
tap_is "$(tr ',' '\n' <<<"$got" | wc -l) $has_gridfile" "$want yes" \
    "structure catalog runs every structure of the registry, gridfile included ($got)"

q -c "SELECT festival.drop_device('wl_peers_smoke')" >/dev/null
tap_done
