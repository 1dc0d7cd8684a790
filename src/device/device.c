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
#include "device/engine.h"

#include <sys/stat.h>
#include <limits.h>
#include <stdlib.h>

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/timestamp.h"

const char *const device_kind_names[] = {"file", "memory", NULL};

/* Capabilities of each kind, in enum order. */
static const uint32 device_kind_caps[] = {
	[DEVICE_KIND_FILE] = DEVICE_CAP_PERSISTENT | DEVICE_CAP_FILE,
	[DEVICE_KIND_MEMORY] = 0
};

/* Does the device of spec offer the capability? */
bool
device_has(const DeviceSpec *spec, DeviceCapability cap)
{
	Assert(spec->kind >= 0 && spec->kind < lengthof(device_kind_caps));
	return (device_kind_caps[spec->kind] & cap) != 0;
}
const char *const device_io_names[] = {"direct", "buffered", NULL};
const char *const device_engine_names[] = {"sync", "libaio", "io_uring", "mmap", NULL};

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
				 errmsg("device directory must not be empty"),
				 errhint("Give a relative directory name, such as the device's name.")));
	if (directory[0] == '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("device directory \"%s\" is an absolute path", directory),
				 errhint("Give a path relative to festival.data_directory; only superusers can change that setting.")));
	if (strlen(directory) > DEVICE_DIRECTORY_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("device directory is longer than %d bytes",
						DEVICE_DIRECTORY_MAXLEN),
				 errhint("Choose a shorter directory.")));

	while (*p)
	{
		const char *start = p;
		size_t		len;

		while (*p && *p != '/')
		{
			unsigned char c = (unsigned char) *p;

			if (c >= 128 || !(isalnum(c) || c == '_' || c == '-' || c == '.'))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("device directory \"%s\" contains the character \"%.*s\"",
								directory, pg_mblen(p), p),
						 errhint("Use ASCII letters, digits, \"_\", \"-\" and \".\" in path components separated by \"/\".")));
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
		{
			p++;
			if (*p == '\0')
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("device directory \"%s\" ends with \"/\"", directory),
						 errhint("Give a plain relative path such as \"ssd/run1\".")));
		}
	}
}

/*
 * Check the parts of a device specification that do not depend on the file
 * system or the catalog.  Features that later issues bring are refused
 * clearly.
 */
void
device_validate_spec(const DeviceSpec *spec)
{
	device_validate_directory(spec->directory);

	/* a mapping reads the page cache, which O_DIRECT writes bypass */
	if (spec->kind == DEVICE_KIND_FILE && spec->engine == DEVICE_ENGINE_MMAP &&
		spec->io_mode == DEVICE_IO_DIRECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("device engine \"mmap\" needs io => 'buffered'"),
				 errdetail("It reads pages out of a mapping of the file's page cache, which O_DIRECT writes bypass."),
				 errhint("Create the device with io => 'buffered', or choose engine 'sync', 'libaio' or 'io_uring' for direct I/O.")));

	/* an engine this kernel refuses (io_uring disabled...) is refused now */
	io_engine_require(spec->engine);
	/* a profile's existence is checked against festival.device_profile */
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
 * Does path resolve to the data directory or inside it?  On failure a
 * description is left in *problem.
 */
static bool
resolves_inside(const char *path, const char *data_directory, char *resolved,
				char **problem, int *code)
{
	size_t		prefix = strlen(data_directory);

	if (realpath(path, resolved) == NULL)
	{
		*problem = psprintf("is not accessible: %m");
		*code = ERRCODE_UNDEFINED_FILE;
		return false;
	}
	if (strncmp(resolved, data_directory, prefix) != 0 ||
		(resolved[prefix] != '/' && resolved[prefix] != '\0'))
	{
		*problem = psprintf("resolves to \"%s\", outside festival.data_directory",
							resolved);
		*code = ERRCODE_INSUFFICIENT_PRIVILEGE;
		return false;
	}
	return true;
}

/*
 * Resolve a device directory inside the data directory, one component at
 * a time; with create, each missing component is made only after its
 * parent was found inside, so nothing is ever created outside.  Returns the
 * resolved path, or NULL with *problem and *code set.
 */
char *
device_locate_directory(const char *data_directory, const char *directory,
						bool create, char **problem, int *code)
{
	char	   *path = psprintf("%s/%s", data_directory, directory);
	char		resolved[PATH_MAX];
	char	   *p = path + strlen(data_directory) + 1;

	for (;; p++)
	{
		char		saved = *p;

		if (saved != '/' && saved != '\0')
			continue;
		*p = '\0';
		if (create)
			make_directory(path);
		if (!resolves_inside(path, data_directory, resolved, problem, code))
			return NULL;
		*p = saved;
		if (saved == '\0')
			break;
	}
	if (strcmp(resolved, data_directory) == 0)
	{
		*problem = pstrdup("resolves to festival.data_directory itself");
		*code = ERRCODE_INSUFFICIENT_PRIVILEGE;
		return NULL;
	}
	return pstrdup(resolved);
}

/* device_locate_directory, raising its problem as an error. */
char *
device_resolve_directory(const char *data_directory, const char *directory,
						 bool create)
{
	char	   *problem;
	int			code;
	char	   *resolved = device_locate_directory(data_directory, directory,
												   create, &problem, &code);

	if (resolved == NULL)
		ereport(ERROR,
				(errcode(code),
				 errmsg("device directory \"%s\" %s", directory, problem),
				 code == ERRCODE_INSUFFICIENT_PRIVILEGE ?
				 errhint("Symbolic links that leave \"%s\" are not allowed.", data_directory) : 0));
	return resolved;
}

char *
device_file_path(const char *device_directory, const char *file_name)
{
	return psprintf("%s/%s", device_directory, file_name);
}

/* festival.open_timeout (src/sql/festival.c defines the setting). */
int			fest_open_timeout_ms = 5000;

/* How long one wait for a lock holder sleeps before trying again. */
#define HOLDER_POLL_MS	5

/*
 * Sleep a little if the wait that began at started may go on: a session
 * that ends (or closes the index) releases it within milliseconds, so the
 * next statement of a script must not fail because the previous backend is
 * still exiting.  Cancellable; false once festival.open_timeout is over.
 */
bool
device_wait_for_holder(TimestampTz started)
{
	long		waited_ms;

	CHECK_FOR_INTERRUPTS();
	if (fest_open_timeout_ms <= 0)
		return false;
	waited_ms = (long) ((GetCurrentTimestamp() - started) / 1000);
	if (waited_ms >= fest_open_timeout_ms)
		return false;
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 Min(HOLDER_POLL_MS, fest_open_timeout_ms - waited_ms),
					 PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return true;
}
