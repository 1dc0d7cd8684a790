/*-------------------------------------------------------------------------
 *
 * device.c
 *	  Validating device specifications and confining paths.
 *
 * IDENTIFICATION
 *	  src/device/device.c
 *
 *-------------------------------------------------------------------------
 */
#include "device/device.h"

#include <sys/stat.h>
#include <limits.h>
#include <stdlib.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"

const char *const device_kind_names[] = {"file", "memory", NULL};
const char *const device_io_names[] = {"direct", "buffered", NULL};
const char *const device_engine_names[] = {"sync", "libaio", "io_uring", NULL};

/* Longest device directory accepted, relative to the data directory. */
#define DEVICE_DIRECTORY_MAXLEN 255

static char *
choices_list(const char *const *choices)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; choices[i] != NULL; i++)
		appendStringInfo(&buf, "%s'%s'", i > 0 ? ", " : "", choices[i]);
	return buf.data;
}

/*
 * Map a spelling to its index in choices, or raise an error listing what is
 * accepted.  what names the parameter ("kind", "io", "engine").
 */
int
device_parse_choice(const char *what, const char *value,
					const char *const *choices)
{
	for (int i = 0; choices[i] != NULL; i++)
		if (strcmp(value, choices[i]) == 0)
			return i;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid device %s \"%s\"", what, value),
			 errhint("Accepted values: %s.", choices_list(choices))));
	pg_unreachable();
}

/*
 * Device directories are relative paths made of simple components, so that
 * they can only name places inside the data directory.
 */
void
device_validate_directory(const char *directory)
{
	const char *p = directory;

	if (directory[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("device directory must not be empty")));
	if (directory[0] == '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("device directory \"%s\" is an absolute path", directory),
				 errhint("Give a path relative to festival.data_directory; only superusers can change that setting.")));
	if (strlen(directory) > DEVICE_DIRECTORY_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("device directory is longer than %d bytes",
						DEVICE_DIRECTORY_MAXLEN)));

	while (*p)
	{
		const char *start = p;
		size_t		len;

		while (*p && *p != '/')
		{
			unsigned char c = (unsigned char) *p;

			if (!(isalnum(c) || c == '_' || c == '-' || c == '.'))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("device directory \"%s\" contains the character \"%c\"",
								directory, *p),
						 errhint("Use letters, digits, \"_\", \"-\" and \".\" in path components separated by \"/\".")));
			p++;
		}
		len = p - start;
		if (len == 0 ||
			(len == 1 && start[0] == '.') ||
			(len == 2 && start[0] == '.' && start[1] == '.'))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("device directory \"%s\" contains an empty, \".\" or \"..\" component",
							directory),
					 errhint("Give a plain relative path such as \"ssd/run1\".")));
		if (*p == '/')
			p++;
	}
}

/*
 * Check the parts of a device specification that do not depend on the file
 * system.  Features that later issues bring are refused clearly.
 */
void
device_validate_spec(const DeviceSpec *spec)
{
	device_validate_directory(spec->directory);

	if (spec->kind == DEVICE_KIND_MEMORY)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("device kind \"memory\" is not supported yet"),
				 errhint("Use kind => 'file'; memory devices arrive with device profiles and virtual time.")));
	if (spec->engine != DEVICE_ENGINE_SYNC)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("device engine \"%s\" is not supported yet",
						device_engine_names[spec->engine]),
				 errhint("Use engine => 'sync'.")));
	if (spec->profile != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("device profiles are not supported yet"),
				 errhint("Leave profile NULL; device profiles and virtual time arrive with the devices feature.")));
}

static void
make_directory(const char *path)
{
	if (mkdir(path, S_IRWXU) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", path)));
}

/*
 * The absolute data directory: the setting, or <PGDATA>/festival when the
 * setting is empty.  With create, it is made if missing.
 */
char *
device_data_directory(const char *setting, bool create)
{
	char	   *path;
	char		resolved[PATH_MAX];

	if (setting == NULL || setting[0] == '\0')
		path = psprintf("%s/festival", DataDir);
	else if (setting[0] != '/')
		path = psprintf("%s/%s", DataDir, setting);
	else
		path = pstrdup(setting);

	if (create)
		make_directory(path);

	if (realpath(path, resolved) == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("festival.data_directory \"%s\" is not accessible: %m", path),
				 errhint("A superuser must point festival.data_directory at an existing directory the server can write.")));
	return pstrdup(resolved);
}

/*
 * Resolve a device directory inside the data directory, creating it (and
 * its parents) when asked, and refuse it if the result lies outside.
 */
char *
device_resolve_directory(const char *data_directory, const char *directory,
						 bool create)
{
	char	   *path = psprintf("%s/%s", data_directory, directory);
	char		resolved[PATH_MAX];
	size_t		prefix = strlen(data_directory);

	if (create)
	{
		/* mkdir -p, one component at a time */
		for (char *p = path + prefix + 1; *p; p++)
		{
			if (*p == '/')
			{
				*p = '\0';
				make_directory(path);
				*p = '/';
			}
		}
		make_directory(path);
	}

	if (realpath(path, resolved) == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("device directory \"%s\" is not accessible: %m", path)));

	if (strncmp(resolved, data_directory, prefix) != 0 ||
		(resolved[prefix] != '/' && resolved[prefix] != '\0') ||
		resolved[prefix] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("device directory \"%s\" resolves to \"%s\", outside festival.data_directory",
						directory, resolved),
				 errhint("Symbolic links that leave \"%s\" are not allowed.",
						 data_directory)));
	return pstrdup(resolved);
}

char *
device_file_path(const char *device_directory, const char *file_name)
{
	return psprintf("%s/%s", device_directory, file_name);
}
