/*-------------------------------------------------------------------------
 *
 * api_ownership.c
 *	  festival.adopt_index, festival.orphan_files, festival.remove_orphan_file:
 *	  taking over a copied index and clearing away the files no database owns.
 *
 * One database owns an index's files (sql/ownership.h).  A database whose
 * festival.index row names another database's file (a restore, a TEMPLATE
 * copy) adopts it: the files are copied under a name of its own and the
 * copy records it as the owner.  Files whose database was dropped, or that
 * their database's catalog no longer names, are listed and removed by a
 * superuser; every removal checks again that the file is such an orphan.
 *
 * IDENTIFICATION
 *	  src/sql/api_ownership.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"
#include "sql/ownership.h"
#include "sql/xact.h"

#include "log/log.h"
#include "tier/tier.h"

#include <sys/stat.h>

#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/copydir.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(festival_adopt_index);
PG_FUNCTION_INFO_V1(festival_orphan_files);
PG_FUNCTION_INFO_V1(festival_remove_orphan_file);

#define INDEX_FILE_SUFFIX ".festival"
#define ADOPTING_SUFFIX ".adopting"	/* an adopted copy until it is this database's */

/* The directory of a device inside festival.data_directory, or NULL. */
static char *
device_directory_of(const DeviceSpec *device)
{
	char	   *problem;
	int			code;
	char	   *data_dir = device_data_directory(fest_data_directory_setting, false);

	return device_locate_directory(data_dir, device->directory, false, &problem, &code);
}

/* The files that go with an index file: its log, tier map and weights. */
static void
companion_paths(const char *path, const char *out[3])
{
	out[0] = log_path_for(path);
	out[1] = tier_map_path(path);
	out[2] = tier_weights_path(path);
}

/* Copy one file durably; the copy goes again if the transaction aborts. */
static void
copy_index_file(const char *from, const char *to)
{
	pending_unlink_on_abort(to);
	copy_file(unconstify(char *, from), unconstify(char *, to));
	fsync_fname(to, false);
}

/*
 * A file name of this database for index name that no file on the
 * device has yet (nor the fast device, for a tiered index).
 */
static char *
adopted_file_name(const char *name, const char *dir, const char *fast_dir)
{
	char	   *file_name = psprintf("db%u_%s" INDEX_FILE_SUFFIX, MyDatabaseId, name);

	for (int attempt = 0;; attempt++)
	{
		char	   *path = device_file_path(dir, file_name);
		const char *companions[3];
		bool		taken = device_file_exists(path) ||
			device_file_exists(psprintf("%s" ADOPTING_SUFFIX, path));

		companion_paths(path, companions);
		for (int i = 0; i < lengthof(companions); i++)
			taken |= device_file_exists(companions[i]);
		if (fast_dir != NULL)
			taken |= device_file_exists(device_file_path(fast_dir, file_name)) ||
				device_file_exists(psprintf("%s/%s" ADOPTING_SUFFIX, fast_dir, file_name));
		if (!taken)
			return file_name;
		if (attempt >= 100)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_FILE),
					 errmsg("could not find a free file name for index \"%s\" on its device", name),
					 errhint("festival.orphan_files() lists files that can be removed.")));
		file_name = psprintf("db%u_%s_%d" INDEX_FILE_SUFFIX, MyDatabaseId, name, attempt + 1);
	}
}

/*
 * festival.adopt_index(index) RETURNS text: give this database its own
 * copy of an index whose files another database owns.  The source file
 * is opened (and locked) while it is copied, so an owner that has it open
 * makes this wait or fail (festival.open_timeout) rather than copy a file
 * being written; its log, tier map and weights and its fast tier's file
 * are copied with it.  Returns the new file name (the old one when the
 * index is already this database's).
 */
Datum
festival_adopt_index(PG_FUNCTION_ARGS)
{
	char	   *name = fest_name_arg(fcinfo, 0, "index");
	IndexCatalog *cat = catalog_load_index(name, false);
	FestFileOwner self;
	FileOwnerInfo info;
	IndexOptions opts;
	void	   *state;
	DeviceSpec	spec;
	LOCKTAG		tag;
	char	   *dir;
	char	   *fast_dir = NULL;
	DeviceSpec *fast = NULL;
	char	   *path;
	char	   *new_name;
	char	   *new_path;
	char	   *adopting_path;
	char	   *fast_path = NULL;
	char	   *new_fast_path = NULL;
	const char *meta_from;
	const char *meta_to;
	DeviceSpec	meta_spec;
	const char *companions[3];
	const char *new_companions[3];
	PageIO	   *source;
	PageIO	   *copy;
	FestStats	stats;
	bool		time_cpu = false;
	FestMeta	meta;

	if (!superuser() && !has_privs_of_role(GetUserId(), cat->owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of index \"%s\" to adopt it", name),
				 errhint("Ask its owner (festival.index.owner), a member of that role or a superuser.")));
	if (!device_has(&cat->device, DEVICE_CAP_FILE))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" is on memory device \"%s\" and has no files to adopt", name,
						cat->device.name),
				 errhint("Its pages live in the memory of the session that writes them; festival.build('%s') refills it.",
						 name)));
	ix_lock_until_commit(cat->index_id, name, &tag);

	dir = device_directory_of(&cat->device);
	if (dir == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("directory \"%s\" of device \"%s\" is missing", cat->device.directory,
						cat->device.name)));
	path = device_file_path(dir, cat->file_name);
	ownership_self(&self);
	ownership_inspect(path, cat->file_name, &info);
	if (!info.exists)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("file \"%s\" of index \"%s\" is missing", path, name),
				 errhint("There is nothing to copy; drop the index with festival.drop_index('%s') and create it again.",
						 name)));
	if (ownership_standing(&info, &self) != FILE_OTHERS)
	{
		ereport(NOTICE,
				(errmsg("index \"%s\" already belongs to this database; nothing to adopt", name)));
		PG_RETURN_TEXT_P(cstring_to_text(cat->file_name));
	}

	(void) index_options_parse(structure_lookup(cat->structure), cat->options, &opts, &state);
	if (opts.tier.enabled)
	{
		fast = catalog_load_device(opts.tier.fast_device);
		fast_dir = device_directory_of(fast);
	}
	new_name = adopted_file_name(name, dir, fast_dir);
	new_path = device_file_path(dir, new_name);

	/* hold the source's lock while copying: its owner must not write it now */
	spec = cat->device;
	spec.io_mode = DEVICE_IO_BUFFERED;
	spec.engine = DEVICE_ENGINE_SYNC;
	memset(&stats, 0, sizeof(stats));
	source = device_file_open(&spec, path, (uint32) opts.page_size, false, &stats, &time_cpu);

	/*
	 * The meta pages are pages 0 and 1 of the index file, or, under
	 * placement all_fast, of the fast tier's file (tier_router.c).
	 */
	meta_from = path;
	meta_to = new_path;
	meta_spec = spec;
	if (fast_dir != NULL)
	{
		fast_path = device_file_path(fast_dir, cat->file_name);
		new_fast_path = device_file_path(fast_dir, new_name);
		if (!info.readable && device_file_exists(fast_path))
		{
			FileOwnerInfo fast_info;

			ownership_inspect(fast_path, cat->file_name, &fast_info);
			if (fast_info.readable)
			{
				meta_from = fast_path;
				meta_to = new_fast_path;
				meta_spec = *fast;
				meta_spec.io_mode = DEVICE_IO_BUFFERED;
				meta_spec.engine = DEVICE_ENGINE_SYNC;
			}
		}
	}

	/*
	 * The file of the meta pages first, under a temporary name, made this
	 * database's and only then renamed; then the others.  A crash leaves a
	 * temporary file, or copies this database owns (or whose names say
	 * so) that its catalog does not name: orphan_files() lists them all.
	 */
	adopting_path = psprintf("%s" ADOPTING_SUFFIX, meta_to);
	pending_unlink_on_abort(meta_to);
	copy_index_file(meta_from, adopting_path);
	copy = device_file_open(&meta_spec, adopting_path, (uint32) opts.page_size, false, &stats, &time_cpu);
	fest_meta_read(copy, name, &meta);
	meta.owner = self;
	fest_meta_write(copy, &meta);
	pageio_sync(copy);
	pageio_close(copy);
	(void) durable_rename(adopting_path, meta_to, ERROR);

	if (meta_from != path)
		copy_index_file(path, new_path);
	if (fast_path != NULL && meta_from != fast_path && device_file_exists(fast_path))
		copy_index_file(fast_path, new_fast_path);
	companion_paths(path, companions);
	companion_paths(new_path, new_companions);
	for (int i = 0; i < lengthof(companions); i++)
		if (device_file_exists(companions[i]))
			copy_index_file(companions[i], new_companions[i]);
	pageio_close(source);

	catalog_set_index_file(cat->index_id, new_name);
	ereport(NOTICE,
			(errmsg("index \"%s\" now uses file \"%s\", a copy of \"%s\" owned by this database",
					name, new_path, path)));
	PG_RETURN_TEXT_P(cstring_to_text(new_name));
}

static bool
has_suffix(const char *name, const char *suffix)
{
	size_t		len = strlen(name);
	size_t		suffix_len = strlen(suffix);

	return len > suffix_len && strcmp(name + len - suffix_len, suffix) == 0;
}

/*
 * Is the file file_name in directory dir an orphan, seen from this
 * database?  Sets *reason and *owner_oid when it is.  A file is an orphan
 * when its owner database was dropped, or when this database owns it
 * (or, recording no owner, its name says this database); never when a
 * row of this database's festival.index names it (adopt it first), nor a
 * file of a live database or of another cluster.  A file without
 * an owner of a live database cannot be told from here: it is left alone
 * (orphan_files in that database lists it).
 */
static bool
is_orphan(const char *dir, const char *file_name, const FestFileOwner *self,
		  Oid *owner_oid, char **reason)
{
	char	   *path = device_file_path(dir, file_name);
	FileOwnerInfo info;
	Oid			oid;
	bool		recorded;

	if (has_suffix(file_name, INDEX_FILE_SUFFIX ADOPTING_SUFFIX))
	{
		/* only a crash leaves one: adopt_index renames it before it commits */
		if (ownership_name_oid(file_name) != self->database_oid || !device_file_exists(path))
			return false;
		*owner_oid = self->database_oid;
		*reason = pstrdup("a copy festival.adopt_index left unfinished (its session ended before it committed)");
		return true;
	}
	ownership_inspect(path, file_name, &info);
	/* a file this database's catalog names is adopted or dropped, never removed */
	if (!info.exists || catalog_file_name_in_use(file_name))
		return false;
	recorded = info.readable && fest_owner_is_set(&info.owner);
	/* another cluster's database, unless this very one (after pg_upgrade) */
	if (recorded && info.owner.system_id != self->system_id &&
		!fest_owner_same_database(&info.owner, self))
		return false;
	oid = recorded ? info.owner.database_oid : info.name_oid;
	if (oid == InvalidOid)
		return false;
	*owner_oid = oid;
	if (recorded && oid == self->database_oid &&
		info.owner.database_uid != self->database_uid)
	{
		*reason = psprintf("its owner was an earlier database of OID %u, since dropped, or this database before its festival extension was created again; no index of festival.index names it", oid);
		return true;
	}
	if (oid == self->database_oid)
	{
		*reason = recorded
			? pstrdup("this database owns it, but no index of festival.index names it")
			: pstrdup("no owner recorded; its name says this database, but no index of festival.index names it");
		return true;
	}
	if (get_database_name(oid) != NULL)
		return false;
	*reason = recorded
		? psprintf("its database (OID %u) was dropped", oid)
		: psprintf("no owner recorded; its name says database OID %u, which was dropped", oid);
	return true;
}

static void
require_superuser(const char *function)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to call %s", function),
				 errhint("Index files of every database of the cluster lie in the device directories; only a superuser decides which may go.")));
}

/* festival.orphan_files() RETURNS SETOF (device, file_name, bytes, owner_database_oid, reason) */
Datum
festival_orphan_files(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FestFileOwner self;
	List	   *devices;
	List	   *seen = NIL;
	ListCell   *lc;

	require_superuser("festival.orphan_files()");
	InitMaterializedSRF(fcinfo, 0);
	ownership_self(&self);
	devices = catalog_list_devices();
	foreach(lc, devices)
	{
		DeviceSpec *device = lfirst(lc);
		char	   *dir;
		DIR		   *dirp;
		struct dirent *de;

		if (!device_has(device, DEVICE_CAP_FILE))
			continue;
		dir = device_directory_of(device);
		/* two devices may share a directory: list its files once */
		if (dir == NULL || list_member(seen, makeString(dir)))
			continue;
		seen = lappend(seen, makeString(dir));
		dirp = AllocateDir(dir);
		while ((de = ReadDir(dirp, dir)) != NULL)
		{
			Oid			owner_oid = InvalidOid;
			char	   *reason = NULL;
			struct stat st;
			Datum		values[5];
			bool		nulls[5] = {false};

			if (!has_suffix(de->d_name, INDEX_FILE_SUFFIX) &&
				!has_suffix(de->d_name, INDEX_FILE_SUFFIX ADOPTING_SUFFIX))
				continue;
			if (!is_orphan(dir, de->d_name, &self, &owner_oid, &reason))
				continue;
			values[0] = CStringGetTextDatum(device->name);
			values[1] = CStringGetTextDatum(de->d_name);
			if (stat(device_file_path(dir, de->d_name), &st) == 0)
				values[2] = Int64GetDatum((int64) st.st_size);
			else
				nulls[2] = true;
			values[3] = ObjectIdGetDatum(owner_oid);
			values[4] = CStringGetTextDatum(reason);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		FreeDir(dirp);
	}
	return (Datum) 0;
}

/*
 * festival.remove_orphan_file(device, file_name) RETURNS integer: remove
 * an orphan (checked again here) with its log, tier map and weights when
 * the transaction commits; the number of files removed.
 */
Datum
festival_remove_orphan_file(PG_FUNCTION_ARGS)
{
	DeviceSpec *device;
	char	   *file_name;
	char	   *dir;
	char	   *path;
	const char *companions[3];
	FestFileOwner self;
	Oid			owner_oid;
	char	   *reason;
	int			removed = 0;

	require_superuser("festival.remove_orphan_file()");
	device = catalog_load_device(fest_text_arg(fcinfo, 0, "device"));
	file_name = fest_text_arg(fcinfo, 1, "file_name");
	if (strchr(file_name, '/') != NULL || file_name[0] == '.' ||
		(!has_suffix(file_name, INDEX_FILE_SUFFIX) &&
		 !has_suffix(file_name, INDEX_FILE_SUFFIX ADOPTING_SUFFIX)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is not the name of an index file", file_name),
				 errhint("Give a file_name as festival.orphan_files() lists it (\"db<oid>_<index>.festival\").")));
	dir = device_directory_of(device);
	if (dir == NULL || !device_has(device, DEVICE_CAP_FILE))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("device \"%s\" has no directory of files", device->name)));
	path = device_file_path(dir, file_name);
	if (!device_file_exists(path))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("file \"%s\" does not exist", path)));
	ownership_self(&self);
	if (!is_orphan(dir, file_name, &self, &owner_oid, &reason))
	{
		FileOwnerInfo info;

		ownership_inspect(path, file_name, &info);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("file \"%s\" is not an orphan: it belongs to %s", path,
						ownership_standing(&info, &self) == FILE_OTHERS
						? ownership_describe(&info, &self) : "this database, whose festival.index names it"),
				 errhint("Only files festival.orphan_files() lists are removed; an index's files go with festival.drop_index() in the database that owns them.")));
	}
	pending_unlink_on_commit(path);
	removed++;
	if (has_suffix(file_name, ADOPTING_SUFFIX))
		PG_RETURN_INT32(removed);
	companion_paths(path, companions);
	for (int i = 0; i < lengthof(companions); i++)
		if (device_file_exists(companions[i]))
		{
			pending_unlink_on_commit(companions[i]);
			removed++;
		}
	PG_RETURN_INT32(removed);
}
