SET festival.build_commit_rows = 1; SET festival.write_through_per_access = off; SET festival.log_sync = 'never';
SELECT festival.drop_index(name) FROM festival.index WHERE name = :'ix';
SELECT festival.create_index(:'ix', 'gridfile', 'hf', (:'opts')::jsonb || '{"page_size":8192,"extent":[0,0,100000,100000]}', 'pts');
SELECT festival.build(:'ix', 'insert'); SELECT festival.flush(:'ix');
SELECT festival.stats(:'ix')->'totals' t0 \gset
SELECT count(festival.insert(:'ix', id, geom)) FROM (SELECT * FROM ext100k ORDER BY id) e;
SELECT k, round(((festival.stats(:'ix')->'totals'->>k)::float8 - (:'t0'::jsonb->>k)::float8)::numeric,3) d FROM unnest(ARRAY['pages_read','pages_written','cache_hits','tier_slow_pages_read','tier_fast_pages_read','tier_slow_pages_written','tier_fast_pages_written','tier_slow_submissions','tier_fast_submissions','tier_promotions','device_erases','device_seconds','tier_slow_device_seconds','tier_fast_device_seconds']) k;
