SELECT festival.close(:'ix');
SELECT festival.stats(:'ix')->'totals' t0 \gset
SELECT count(*) FROM (SELECT * FROM s100k) o WHERE EXISTS (SELECT FROM festival.query(:'ix', o.geom) q WHERE q.id = o.id);
SELECT 'search0/100', round(((festival.stats(:'ix')->'totals'->>'device_seconds')::float8 - (:'t0'::jsonb->>'device_seconds')::float8)::numeric,4) dev,
 (festival.stats(:'ix')->'totals'->>'tier_slow_submissions')::bigint - (:'t0'::jsonb->>'tier_slow_submissions')::bigint slow,
 (festival.stats(:'ix')->'totals'->>'tier_fast_submissions')::bigint - (:'t0'::jsonb->>'tier_fast_submissions')::bigint fast;
SELECT festival.close(:'ix');
SELECT festival.stats(:'ix')->'totals' t0 \gset
SELECT count(*) FROM (SELECT * FROM w001 UNION ALL SELECT * FROM w01) w, LATERAL festival.query(:'ix', w.geom) q;
SELECT 'windows', round(((festival.stats(:'ix')->'totals'->>'device_seconds')::float8 - (:'t0'::jsonb->>'device_seconds')::float8)::numeric,4) dev,
 (festival.stats(:'ix')->'totals'->>'tier_slow_submissions')::bigint - (:'t0'::jsonb->>'tier_slow_submissions')::bigint slow,
 (festival.stats(:'ix')->'totals'->>'tier_fast_submissions')::bigint - (:'t0'::jsonb->>'tier_fast_submissions')::bigint fast;
