/*-------------------------------------------------------------------------
 *
 * api_device.c
 *	  festival.create_device() and festival.drop_device().
 *
 * Devices name places on the server's file system, so only superusers and
 * members of the role festival_admin may create or drop them.  Everyone
 * may create indices on existing devices.
 *
 * IDENTIFICATION
 *	  src/sql/api_device.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#define FEST_ADMIN_ROLE "festival_admin"

PG_FUNCTION_INFO_V1(festival_create_device);
PG_FUNCTION_INFO_V1(festival_drop_device);

static void
require_device_admin(const char *action, const char *name)
{
	Oid			admin = get_role_oid(FEST_ADMIN_ROLE, true);

	if (superuser())
		return;
	if (OidIsValid(admin) && has_privs_of_role(GetUserId(), admin))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to %s device \"%s\"", action, name),
			 errhint("Only superusers and members of role %s manage devices.",
					 FEST_ADMIN_ROLE)));
}

/*
 * festival.create_device(name, directory, kind, io, engine, profile):
 * validate, create the directory inside festival.data_directory, and
 * record the device; returns its name.
 */
Datum
festival_create_device(PG_FUNCTION_ARGS)
{
	DeviceSpec	spec;
	char	   *data_dir;

	spec.name = fest_text_arg(fcinfo, 0, "device name");
	require_device_admin("create", spec.name);
	fest_validate_name("device", spec.name);

	spec.directory = PG_ARGISNULL(1) ? pstrdup(spec.name)
		: text_to_cstring(PG_GETARG_TEXT_PP(1));
	spec.kind = device_parse_choice("kind", fest_text_arg(fcinfo, 2, "device kind"),
									device_kind_names);
	spec.io_mode = device_parse_choice("io", fest_text_arg(fcinfo, 3, "device io"),
									   device_io_names);
	spec.engine = device_parse_choice("engine", fest_text_arg(fcinfo, 4, "device engine"),
									  device_engine_names);
	spec.profile = PG_ARGISNULL(5) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(5));
	device_validate_spec(&spec);
	if (spec.profile != NULL)
		(void) catalog_load_profile(spec.profile);	/* errors if unknown */
	if (!device_has(&spec, DEVICE_CAP_PERSISTENT))
		ereport(NOTICE,
				(errmsg("indices on memory device \"%s\" keep their pages in the memory of the session using them; the pages are lost when the index is closed or the session ends",
						spec.name)));

	data_dir = device_data_directory(fest_data_directory_setting, true);
	(void) device_resolve_directory(data_dir, spec.directory, true);

	catalog_insert_device(&spec);
	/* psql then shows what was made rather than an empty row */
	PG_RETURN_TEXT_P(cstring_to_text(spec.name));
}

/*
 * festival.drop_device(name): forget a device no index uses; returns its
 * name.  Its directory is left in place; it may hold files festival does
 * not own.
 */
Datum
festival_drop_device(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "device");
	int			nindices;

	require_device_admin("drop", name);
	(void) catalog_load_device(name);	/* errors if it does not exist */
	nindices = catalog_device_index_count(name);
	if (nindices > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("device \"%s\" holds %d %s", name, nindices,
						nindices == 1 ? "index" : "indices"),
				 errhint("Drop them first with festival.drop_index(); festival.index lists them.")));
	catalog_delete_device(name);
	PG_RETURN_TEXT_P(cstring_to_text(name));
}
