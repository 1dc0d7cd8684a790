CREATE TEMP TABLE b0 AS SELECT * FROM festival.tier_pages(:'ix');
SELECT count(*) FROM w001 w, LATERAL festival.query(:'ix', w.geom) q;
CREATE TEMP TABLE b1 AS SELECT * FROM festival.tier_pages(:'ix');
SELECT count(*) FROM w01 w, LATERAL festival.query(:'ix', w.geom) q;
CREATE TEMP TABLE b2 AS SELECT * FROM festival.tier_pages(:'ix');
SELECT count(*) FROM kq w, LATERAL festival.knn(:'ix', w.geom, 10) q;
CREATE TEMP TABLE b3 AS SELECT * FROM festival.tier_pages(:'ix');
SELECT 'w001' wl, x.level, x.tier, count(*) pages, sum(y.accesses - x.accesses) acc FROM b0 x JOIN b1 y USING (page) WHERE x.level IS NOT NULL GROUP BY 2,3
UNION ALL SELECT 'w01', x.level, x.tier, count(*), sum(y.accesses - x.accesses) FROM b1 x JOIN b2 y USING (page) WHERE x.level IS NOT NULL GROUP BY 2,3
UNION ALL SELECT 'knn10', x.level, x.tier, count(*), sum(y.accesses - x.accesses) FROM b2 x JOIN b3 y USING (page) WHERE x.level IS NOT NULL GROUP BY 2,3 ORDER BY 1,2,3;
