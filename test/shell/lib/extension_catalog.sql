-- Every object of the festival extension with its definition, one line
-- each, sorted: what test/shell/extension_upgrade.sh compares between a
-- database whose festival was updated by ALTER EXTENSION ... UPDATE and a
-- database where the newest version was created afresh.  Functions by
-- pg_get_functiondef (signature, result, volatility, strictness, body or C
-- symbol), relations by their columns (type, NOT NULL, default, generated
-- expression), constraints, indexes, view definitions, row security and
-- its policies, privileges and comments; the
-- extension's configuration-dump filters; the built-in rows of
-- festival.device_profile.
WITH ext AS (
	SELECT oid FROM pg_extension WHERE extname = 'festival'
), member AS (
	SELECT d.classid, d.objid
	FROM pg_depend d, ext
	WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
), described AS (
	SELECT pg_describe_object(m.classid, m.objid, 0) AS object,
		CASE
		WHEN m.classid = 'pg_proc'::regclass THEN
			(SELECT CASE WHEN p.prokind = 'a' THEN 'aggregate ' || pg_get_function_arguments(p.oid)
					|| ' -> ' || pg_get_function_result(p.oid)
				ELSE pg_get_functiondef(p.oid) END || coalesce(' | acl ' || p.proacl::text, '')
			 FROM pg_proc p WHERE p.oid = m.objid)
		WHEN m.classid = 'pg_class'::regclass THEN
			(SELECT c.relkind::text || ' ' || coalesce((
				SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
					|| CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
					|| CASE WHEN a.attgenerated <> '' THEN ' generated ' ELSE '' END
					|| coalesce(' = ' || pg_get_expr(ad.adbin, ad.adrelid), '')
					|| coalesce(' -- ' || col_description(c.oid, a.attnum), ''),
					', ' ORDER BY a.attnum)
				FROM pg_attribute a
				LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
				WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
				|| coalesce(' | constraints ' || (SELECT string_agg(co.conname || ' ' || pg_get_constraintdef(co.oid), '; ' ORDER BY co.conname)
					FROM pg_constraint co WHERE co.conrelid = c.oid), '')
				|| coalesce(' | indexes ' || (SELECT string_agg(pg_get_indexdef(i.indexrelid), '; ' ORDER BY 1)
					FROM pg_index i WHERE i.indrelid = c.oid), '')
				|| CASE WHEN c.relkind = 'v' THEN ' | view ' || pg_get_viewdef(c.oid) ELSE '' END
				|| CASE WHEN c.relrowsecurity THEN ' | row security' ELSE '' END
				|| coalesce(' | policies ' || (SELECT string_agg(po.polname || ' ' || po.polcmd::text || ' '
						|| coalesce(pg_get_expr(po.polqual, po.polrelid), '') || ' '
						|| coalesce(pg_get_expr(po.polwithcheck, po.polrelid), ''), '; ' ORDER BY po.polname)
					FROM pg_policy po WHERE po.polrelid = c.oid), '')
				|| coalesce(' | acl ' || c.relacl::text, '')
				|| coalesce(' | comment ' || obj_description(c.oid, 'pg_class'), '')
			 FROM pg_class c WHERE c.oid = m.objid)
		WHEN m.classid = 'pg_type'::regclass THEN
			(SELECT format_type(t.oid, NULL) || ' ' || t.typtype::text FROM pg_type t WHERE t.oid = m.objid)
		ELSE ''
		END AS definition,
		coalesce(obj_description(m.objid, (SELECT relname FROM pg_class WHERE oid = m.classid)), '') AS comment
	FROM member m
)
SELECT object || E'\t' || coalesce(definition, '?') || E'\t' || comment
FROM described
UNION ALL
SELECT 'configuration dump ' || c::regclass::text || ' ' || coalesce(cond, '')
FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(c, cond)
WHERE e.extname = 'festival'
UNION ALL
SELECT 'device_profile ' || p::text FROM festival.device_profile p WHERE p.builtin
ORDER BY 1;
