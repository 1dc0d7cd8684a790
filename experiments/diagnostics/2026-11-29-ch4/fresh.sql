SET festival.build_commit_rows = 1; SET festival.write_through_per_access = off; SET festival.log_sync = 'never';
SELECT festival.drop_index(name) FROM festival.index WHERE name = :'ix';
SELECT festival.create_index(:'ix', 'gridfile', 'hf', (:'opts')::jsonb || '{"page_size":8192,"extent":[0,0,100000,100000]}', 'pts');
SELECT festival.build(:'ix', 'insert'); SELECT festival.flush(:'ix');
SELECT festival.stats(:'ix')->'totals' t0 \gset
SELECT count(*) FILTER (WHERE r) AS found FROM (SELECT CASE WHEN ins THEN festival.insert(:'ix', id, g) ELSE EXISTS (SELECT FROM festival.query(:'ix', g) q WHERE q.id = o.id) END AS r FROM (SELECT * FROM seq_mix_:p ORDER BY s) o) x \gset
SELECT :'ix', :p AS mix, round(((festival.stats(:'ix')->'totals'->>'device_seconds')::float8 - (:'t0'::jsonb->>'device_seconds')::float8)::numeric,3) dev,
 (festival.stats(:'ix')->'totals'->>'tier_slow_submissions')::bigint - (:'t0'::jsonb->>'tier_slow_submissions')::bigint slow,
 (festival.stats(:'ix')->'totals'->>'tier_fast_submissions')::bigint - (:'t0'::jsonb->>'tier_fast_submissions')::bigint fast,
 round(100.0*((festival.stats(:'ix')->'totals'->>'tier_fast_pages_read')::bigint - (:'t0'::jsonb->>'tier_fast_pages_read')::bigint) / nullif((festival.stats(:'ix')->'totals'->>'pages_read')::bigint - (:'t0'::jsonb->>'pages_read')::bigint,0),1) fast_read_pct;
