SELECT festival.close(:'ix');
SELECT festival.stats(:'ix')->'totals' t0 \gset
SELECT count(*) FROM kq w, LATERAL festival.knn(:'ix', w.geom, :k) q;
SELECT :k k, round(((festival.stats(:'ix')->'totals'->>'device_seconds')::float8 - (:'t0'::jsonb->>'device_seconds')::float8)::numeric,4) dev,
 (festival.stats(:'ix')->'totals'->>'tier_slow_submissions')::bigint - (:'t0'::jsonb->>'tier_slow_submissions')::bigint slow,
 (festival.stats(:'ix')->'totals'->>'tier_fast_submissions')::bigint - (:'t0'::jsonb->>'tier_fast_submissions')::bigint fast,
 (festival.stats(:'ix')->'totals'->>'pages_read')::bigint - (:'t0'::jsonb->>'pages_read')::bigint pr;
