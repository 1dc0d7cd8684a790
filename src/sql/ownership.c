/*-------------------------------------------------------------------------
 *
 * ownership.c
 *	  Which database owns an index file: this database's identity, reading
 *	  a file's owner without opening it, claiming files written before
 *	  owners were recorded, and the refusal of another database's file.
 *
 * A file's owner is read from its meta page without taking the file's
 * lock (another database may hold it open): only the owner fields are
 * used, which are written once, at creation, adoption or claim.
 *
 * IDENTIFICATION
 *	  src/sql/ownership.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/ownership.h"

#include "format/page.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "commands/dbcommands.h"

/* This database: the cluster, its OID and its random identifier. */
void
ownership_self(FestFileOwner *self)
{
	self->system_id = GetSystemIdentifier();
	self->database_oid = MyDatabaseId;
	self->database_uid = catalog_database_uid();
}

/* The OID in a file name "db<oid>_...", as create_index names files; 0 if none. */
Oid
ownership_name_oid(const char *file_name)
{
	unsigned int oid;
	int			consumed = 0;

	if (sscanf(file_name, "db%u_%n", &oid, &consumed) != 1 || consumed == 0)
		return InvalidOid;
	return (Oid) oid;
}

/*
 * What the file at path says of its owner: its meta pages read with plain
 * reads, without the file's lock.
 */
void
ownership_inspect(const char *path, const char *file_name, FileOwnerInfo *info)
{
	char		probe[FEST_PAGE_HEADER_SIZE + sizeof(FestMetaDisk)];
	int			fd;
	ssize_t		got;

	memset(info, 0, sizeof(*info));
	info->name_oid = ownership_name_oid(file_name);
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open index file \"%s\": %m", path)));
		return;
	}
	info->exists = true;
	got = pg_pread(fd, probe, sizeof(probe), 0);
	if (got == (ssize_t) sizeof(probe) &&
		memcmp(((FestMetaDisk *) FestPageGetBody(probe))->magic, FEST_META_MAGIC, 8) == 0)
	{
		uint32		page_size = ((FestMetaDisk *) FestPageGetBody(probe))->page_size;

		if (page_size >= FEST_MIN_PAGE_SIZE && page_size <= FEST_MAX_PAGE_SIZE)
		{
			size_t		len = (size_t) page_size * FEST_META_PAGES;
			char	   *head = palloc(len);
			FestMeta	meta;

			got = pg_pread(fd, head, len, 0);
			if (got > 0 && fest_meta_peek(head, (size_t) got, &meta))
			{
				info->readable = true;
				info->owner = meta.owner;
				pfree(meta.config);
			}
			pfree(head);
		}
	}
	CloseTransientFile(fd);
}

/*
 * How the file stands to this database.  A recorded owner decides; a file
 * without one (written before owners were recorded, or unreadable) is
 * taken to be the database's whose OID its name carries.
 */
FileStanding
ownership_standing(const FileOwnerInfo *info, const FestFileOwner *self)
{
	if (info->readable && fest_owner_is_set(&info->owner))
		return fest_owner_same_database(&info->owner, self) ? FILE_OURS : FILE_OTHERS;
	if (info->name_oid == self->database_oid)
		return info->readable ? FILE_UNCLAIMED_OURS : FILE_OURS;
	return FILE_OTHERS;
}

/* The owner of a file, in words, for messages. */
char *
ownership_describe(const FileOwnerInfo *info, const FestFileOwner *self)
{
	const FestFileOwner *owner = &info->owner;
	char	   *name;

	if (!info->readable || !fest_owner_is_set(owner))
	{
		if (info->name_oid == InvalidOid)
			return pstrdup("no database (none is recorded in the file)");
		name = get_database_name(info->name_oid);
		return name != NULL
			? psprintf("database \"%s\" (OID %u; no owner is recorded in the file, its name says that OID)",
					   name, info->name_oid)
			: psprintf("a dropped database (OID %u; no owner is recorded in the file, its name says that OID)",
					   info->name_oid);
	}
	if (owner->system_id != self->system_id)
		return psprintf("database OID %u of another cluster (system identifier " UINT64_FORMAT ")",
						owner->database_oid, owner->system_id);
	if (owner->database_oid == self->database_oid)
		return psprintf("an earlier database of OID %u, since dropped, or this database before its festival extension was created again",
						owner->database_oid);
	name = get_database_name(owner->database_oid);
	return name != NULL
		? psprintf("database \"%s\" (OID %u)", name, owner->database_oid)
		: psprintf("a dropped database (OID %u)", owner->database_oid);
}

void
ownership_refuse(const char *index_name, const char *path,
				 const FileOwnerInfo *info, const FestFileOwner *self)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("file \"%s\" of index \"%s\" belongs to %s, not to database \"%s\"",
					path, index_name, ownership_describe(info, self),
					get_database_name(MyDatabaseId)),
			 errdetail("One database owns an index's files; this database's row of festival.index was copied from the owner's (pg_dump and restore, or CREATE DATABASE ... TEMPLATE)."),
			 errhint("festival.adopt_index('%s') gives this database its own copy of the files; festival.drop_index('%s') removes the index here and leaves the files to their owner.",
					 index_name, index_name)));
}

/*
 * At the open of an index file (meta just read, nothing written): refuse
 * another database's file; claim one that records no owner and whose name
 * carries this database's OID (written before owners were recorded),
 * saying so.  A clean file records the claim at once; an unclean one with
 * the next meta write, which the store makes before its first change.
 */
void
ownership_settle_open(const char *index_name, const char *path,
					  const char *file_name, FestMeta *meta, PageIO *io)
{
	FestFileOwner self;
	FileOwnerInfo info;

	ownership_self(&self);
	memset(&info, 0, sizeof(info));
	info.exists = info.readable = true;
	info.owner = meta->owner;
	info.name_oid = ownership_name_oid(file_name);

	switch (ownership_standing(&info, &self))
	{
		case FILE_OURS:
			if (meta->owner.system_id != self.system_id)
			{
				/* this database moved to a new cluster (pg_upgrade) */
				ereport(NOTICE,
						(errmsg("index \"%s\": file \"%s\" was written by this database in the cluster of system identifier " UINT64_FORMAT "; it now records this cluster's",
								index_name, path, meta->owner.system_id)));
				meta->owner.system_id = self.system_id;
				if (meta->flags & FEST_META_CLEAN)
				{
					fest_meta_write(io, meta);
					pageio_sync(io);
				}
			}
			return;
		case FILE_OTHERS:
			ownership_refuse(index_name, path, &info, &self);
			break;
		case FILE_UNCLAIMED_OURS:
			meta->owner = self;
			ereport(NOTICE,
					(errmsg("index \"%s\": file \"%s\" records no owner (it was written before festival recorded owners); database \"%s\" claims it",
							index_name, path, get_database_name(MyDatabaseId))));
			if (meta->flags & FEST_META_CLEAN)
			{
				fest_meta_write(io, meta);
				pageio_sync(io);
			}
			break;
	}
}
