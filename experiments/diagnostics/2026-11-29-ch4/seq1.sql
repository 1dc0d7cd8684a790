SELECT festival.stats(:'ix')->'totals' t0 \gset
SELECT count(*) FILTER (WHERE r) AS found FROM (SELECT CASE WHEN ins THEN festival.insert(:'ix', id, g) ELSE EXISTS (SELECT FROM festival.query(:'ix', g) q WHERE q.id = o.id) END AS r FROM (SELECT * FROM seq_mix_:p ORDER BY s) o) x \gset
SELECT :p AS mix, round(((festival.stats(:'ix')->'totals'->>'device_seconds')::float8 - (:'t0'::jsonb->>'device_seconds')::float8)::numeric,3) dev,
 round(100.0*((festival.stats(:'ix')->'totals'->>'tier_fast_pages_read')::bigint - (:'t0'::jsonb->>'tier_fast_pages_read')::bigint) / nullif((festival.stats(:'ix')->'totals'->>'pages_read')::bigint - (:'t0'::jsonb->>'pages_read')::bigint,0),1) fast_read_pct,
 (festival.stats(:'ix')->>'hot')::jsonb->>'hot_pages' hot_pages_after_mix;
SELECT count(festival.delete(:'ix', id, g)) AS deleted FROM seq_mix_:p WHERE ins \gset
SELECT festival.flush(:'ix') \gset
SELECT (festival.stats(:'ix')->'hot'->>'hot_pages') hot_after_unmix;
