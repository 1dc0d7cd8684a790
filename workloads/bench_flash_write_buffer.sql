-- workloads/bench_flash_write_buffer.sql: FAST and eFIND with the same
-- write buffer.
--
-- eFIND's read buffer takes read_buffer_percent (20%) of buffer_size, so
-- with the same 512 kB eFIND's write buffer is 410 kB against FAST's
-- 512 kB, and it flushes more often.  This compares, on the uniform data
-- set of workloads/bench_flash.sql (run it first): FAST with 512 kB; eFIND
-- with 512 kB and no read buffer; eFIND with 640 kB, i.e. a 512 kB write
-- buffer and a 128 kB read buffer.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET festival.progress_interval = 0;
\o /dev/null
SELECT festival.drop_index(name) FROM festival.index WHERE name LIKE 'bfw\_%';
DELETE FROM festival.run WHERE label LIKE 'flash-wb:%';

CREATE TEMP TABLE bfw_configs (n int, name text, description text, options jsonb);
INSERT INTO bfw_configs VALUES
 (1, 'bfw_fast', 'FAST, 512 kB write buffer',
  '{"framework": "fast", "buffer_size": 524288}'),
 (2, 'bfw_efind_norb', 'eFIND, 512 kB write buffer, no read buffer',
  '{"framework": "efind", "buffer_size": 524288, "read_buffer_policy": "none", "read_buffer_percent": 0}'),
 (3, 'bfw_efind_640k', 'eFIND, 512 kB write + 128 kB read buffer',
  '{"framework": "efind", "buffer_size": 655360}');
UPDATE bfw_configs
SET options = options || '{"page_size": 4096, "split": "quadratic", "flushing_unit": 5}';

SELECT festival.create_index(name, 'rtree', 'bench_flash', options, 'bf_uniform'::regclass)
FROM bfw_configs;
SELECT format($f$SELECT festival.begin_run('flash-wb: %1$s build');
SELECT festival.build('%1$s');
SELECT festival.end_run();
SELECT festival.close('%1$s');$f$, name)
FROM bfw_configs ORDER BY n \gexec
\o

\pset footer off
\echo
\echo 'FAST and eFIND with the same write buffer (uniform data set, build):'
SELECT c.description AS configuration,
       round(r.wall_seconds::numeric, 2) AS wall_s,
       round(r.io_seconds::numeric, 2) AS device_s,
       r.pages_written, r.pages_read,
       (r.metrics ->> 'flushes')::bigint AS flushes
FROM bfw_configs c
JOIN festival.run r ON r.label = 'flash-wb: ' || c.name || ' build'
ORDER BY c.n;

\o /dev/null
SELECT festival.drop_index(name) FROM bfw_configs;
\o
