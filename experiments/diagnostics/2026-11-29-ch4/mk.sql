SET festival.build_commit_rows = 1; SET festival.write_through_per_access = off; SET festival.log_sync = 'never';
SELECT festival.drop_index(name) FROM festival.index WHERE name = :'ix';
SELECT festival.create_index(:'ix', 'gridfile', 'hf', (:'opts')::jsonb || '{"page_size":8192,"extent":[0,0,100000,100000]}', 'pts');
SELECT festival.build(:'ix', 'insert'); SELECT festival.flush(:'ix');
SELECT festival.stats(:'ix')->'hot' hot, festival.stats(:'ix')->'pages' pages;
SELECT level, tier, hot, count(*), sum(accesses), round(avg(weight)::numeric,3) FROM festival.tier_pages(:'ix') GROUP BY 1,2,3 ORDER BY 1,2,3;
