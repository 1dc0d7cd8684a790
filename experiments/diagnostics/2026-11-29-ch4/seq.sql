SET festival.build_commit_rows = 1; SET festival.write_through_per_access = off; SET festival.log_sync = 'never';
SELECT festival.drop_index(name) FROM festival.index WHERE name = :'ix';
SELECT festival.create_index(:'ix', 'gridfile', 'hf', (:'opts')::jsonb || '{"page_size":8192,"extent":[0,0,100000,100000]}', 'pts');
SELECT festival.build(:'ix', 'insert'); SELECT festival.flush(:'ix');
\set p 0
\ir seq1.sql
\set p 20
\ir seq1.sql
\set p 40
\ir seq1.sql
\set p 60
\ir seq1.sql
\set p 80
\ir seq1.sql
\set p 100
\ir seq1.sql
