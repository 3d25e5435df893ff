/* walbuf — the writer's WAL writes gathered into one write per commit.
 *
 * DESIGN: SQLite appends a commit to the WAL frame by frame, and each
 * frame in two write calls (its 24-byte header, then the page): a group
 * commit of 10 pages is 20 pwrite(2)s before the fsync. On a virtual
 * machine a system call is dear (3.6 us for a frame written in two calls
 * here, 0.6 us per frame when 8 go in one), and the writer is on the path
 * of every DHCP ACK. This VFS wraps the default one for the writer's
 * connection only: writes to the WAL file that follow each other are
 * held in a buffer and written in one call when something needs them on
 * the file: before a sync (the commit's fsync: synchronous=FULL), a read,
 * a truncate, a size query, a file control or a close, when a write is
 * not contiguous, when the buffer is full, and right after the page of a
 * commit frame (whose header carries the database size), so that no
 * other connection can see a committed frame that is not in the file even
 * without a sync. Every other file, and every other method, goes straight
 * to the default VFS, which also keeps the locks and the shared memory
 * of all connections as they were.
 *
 * A write error surfaces where the buffer is written, from the call that
 * needed it (most often the sync), and SQLite fails that commit: nothing
 * is reported done that is not in the file.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "store/store-internal.h"

/* Bytes held at most before a write. The default VFS writes at most
 * 128 KiB - 1 in one call (SQLite's pages are at most 64 KiB): a larger
 * write would come back short, as a full disk. */
#define WALBUF_CAP (120 * 1024)
#define WAL_FRAME_HDR 24

struct wb_file {
	sqlite3_file base; /* pMethods: ours */
	sqlite3_file *real;
	bool wal;
	bool commit_page; /* the last write was a commit frame's header */
	unsigned char *buf;
	size_t len;
	sqlite3_int64 off; /* file offset of buf[0] */
	/* the default VFS's file follows, 8-aligned */
};

static sqlite3_vfs wb_vfs;
static sqlite3_vfs *real_vfs;
static sqlite3_io_methods wb_methods[3]; /* versions 1, 2 and 3 */
static pthread_once_t wb_once = PTHREAD_ONCE_INIT;
static int wb_init_rc = SQLITE_ERROR;
static unsigned long wb_writes; /* writes made to WAL files (atomic) */

#define WB(f) ((struct wb_file *)(f))

/* A write to the default VFS's file, counted when it is a WAL's. */
static int write_real(struct wb_file *p, const void *data, int amt, sqlite3_int64 off)
{
	if (p->wal)
		__atomic_add_fetch(&wb_writes, 1, __ATOMIC_RELAXED);
	return p->real->pMethods->xWrite(p->real, data, amt, off);
}

static int flush(struct wb_file *p)
{
	if (!p->len)
		return SQLITE_OK;
	size_t len = p->len;
	p->len = 0;
	return write_real(p, p->buf, (int)len, p->off);
}

static int wb_close(sqlite3_file *f)
{
	struct wb_file *p = WB(f);
	int rc = flush(p);
	int rc2 = p->real->pMethods->xClose(p->real);
	free(p->buf);
	p->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wb_read(sqlite3_file *f, void *out, int amt, sqlite3_int64 off)
{
	struct wb_file *p = WB(f);
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xRead(p->real, out, amt, off);
}

static int wb_write(sqlite3_file *f, const void *data, int amt, sqlite3_int64 off)
{
	struct wb_file *p = WB(f);
	int rc;

	/* Not a buffered WAL (buf is NULL), or a write larger than the
	 * buffer: straight through, after what is held. */
	if (!p->buf || amt <= 0 || (size_t)amt > WALBUF_CAP) {
		if ((rc = flush(p)) != SQLITE_OK)
			return rc;
		return write_real(p, data, amt, off);
	}
	if (p->len && (off != p->off + (sqlite3_int64)p->len || p->len + (size_t)amt > WALBUF_CAP))
		if ((rc = flush(p)) != SQLITE_OK)
			return rc;
	if (!p->len)
		p->off = off;
	memcpy(p->buf + p->len, data, (size_t)amt);
	p->len += (size_t)amt;
	/* A frame header whose bytes 4-7 (the database size after the
	 * commit) are not zero ends a transaction: its page, written next,
	 * goes to the file at once. */
	if (p->commit_page) {
		p->commit_page = false;
		return flush(p);
	}
	if (amt == WAL_FRAME_HDR) {
		const unsigned char *h = data;
		p->commit_page = (h[4] | h[5] | h[6] | h[7]) != 0;
	}
	return SQLITE_OK;
}

static int wb_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct wb_file *p = WB(f);
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xTruncate(p->real, size);
}

static int wb_sync(sqlite3_file *f, int flags)
{
	struct wb_file *p = WB(f);
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xSync(p->real, flags);
}

static int wb_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct wb_file *p = WB(f);
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xFileSize(p->real, size);
}

static int wb_lock(sqlite3_file *f, int level)
{
	return WB(f)->real->pMethods->xLock(WB(f)->real, level);
}

static int wb_unlock(sqlite3_file *f, int level)
{
	return WB(f)->real->pMethods->xUnlock(WB(f)->real, level);
}

static int wb_check_reserved(sqlite3_file *f, int *out)
{
	return WB(f)->real->pMethods->xCheckReservedLock(WB(f)->real, out);
}

static int wb_file_control(sqlite3_file *f, int op, void *arg)
{
	struct wb_file *p = WB(f);
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xFileControl(p->real, op, arg);
}

static int wb_sector_size(sqlite3_file *f)
{
	return WB(f)->real->pMethods->xSectorSize(WB(f)->real);
}

static int wb_device_characteristics(sqlite3_file *f)
{
	return WB(f)->real->pMethods->xDeviceCharacteristics(WB(f)->real);
}

static int wb_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out)
{
	return WB(f)->real->pMethods->xShmMap(WB(f)->real, region, size, extend, out);
}

static int wb_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return WB(f)->real->pMethods->xShmLock(WB(f)->real, offset, n, flags);
}

static void wb_shm_barrier(sqlite3_file *f)
{
	WB(f)->real->pMethods->xShmBarrier(WB(f)->real);
}

static int wb_shm_unmap(sqlite3_file *f, int del)
{
	return WB(f)->real->pMethods->xShmUnmap(WB(f)->real, del);
}

static int wb_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **out)
{
	struct wb_file *p = WB(f);
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xFetch(p->real, off, amt, out);
}

static int wb_unfetch(sqlite3_file *f, sqlite3_int64 off, void *ptr)
{
	return WB(f)->real->pMethods->xUnfetch(WB(f)->real, off, ptr);
}

static int wb_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
		   int *out_flags)
{
	struct wb_file *p = WB(f);
	(void)vfs;

	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)(p + 1);
	int rc = real_vfs->xOpen(real_vfs, name, p->real, flags, out_flags);
	if (rc != SQLITE_OK || !p->real->pMethods) {
		p->base.pMethods = NULL;
		return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
	}
	/* SQLite calls only the methods of the file's version. */
	int v = p->real->pMethods->iVersion;
	p->wal = (flags & SQLITE_OPEN_WAL) != 0;
	if (p->wal && !(p->buf = malloc(WALBUF_CAP)))
		p->wal = false; /* unbuffered, as without this VFS */
	p->base.pMethods = &wb_methods[v < 1 ? 0 : v > 3 ? 2 : v - 1];
	return SQLITE_OK;
}

static void wb_init(void)
{
	if (!(real_vfs = sqlite3_vfs_find(NULL)))
		return;
	wb_methods[2] = (sqlite3_io_methods){
		.iVersion = 3,
		.xClose = wb_close,
		.xRead = wb_read,
		.xWrite = wb_write,
		.xTruncate = wb_truncate,
		.xSync = wb_sync,
		.xFileSize = wb_file_size,
		.xLock = wb_lock,
		.xUnlock = wb_unlock,
		.xCheckReservedLock = wb_check_reserved,
		.xFileControl = wb_file_control,
		.xSectorSize = wb_sector_size,
		.xDeviceCharacteristics = wb_device_characteristics,
		.xShmMap = wb_shm_map,
		.xShmLock = wb_shm_lock,
		.xShmBarrier = wb_shm_barrier,
		.xShmUnmap = wb_shm_unmap,
		.xFetch = wb_fetch,
		.xUnfetch = wb_unfetch,
	};
	wb_methods[1] = wb_methods[2];
	wb_methods[1].iVersion = 2;
	wb_methods[0] = wb_methods[2];
	wb_methods[0].iVersion = 1;
	/* Every VFS method but xOpen is the default VFS's own: they take the
	 * VFS only for its constants, copied with it. */
	wb_vfs = *real_vfs;
	wb_vfs.pNext = NULL;
	wb_vfs.zName = STORE_WALBUF_VFS;
	wb_vfs.szOsFile = (int)((sizeof(struct wb_file) + 7) / 8 * 8) + real_vfs->szOsFile;
	wb_vfs.xOpen = wb_open;
	wb_init_rc = sqlite3_vfs_register(&wb_vfs, 0);
}

int store_walbuf_register(void)
{
	pthread_once(&wb_once, wb_init);
	return wb_init_rc == SQLITE_OK ? 0 : -EIO;
}

unsigned long store_walbuf_writes(void)
{
	return __atomic_load_n(&wb_writes, __ATOMIC_RELAXED);
}
