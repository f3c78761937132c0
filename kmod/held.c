// SPDX-License-Identifier: GPL-2.0-only
/*
 * Held entries: memory the pool handed out that outlives the pool's own
 * use of it.
 *
 * An import gives the importer an fd of the entry's dma-buf file, the same
 * file the exporter pinned.  RELEASE, or closing the pool fd, only drops
 * the import the pool counted: the fd, its dups and its mappings keep the
 * memory alive.  So an entry that is unpinned and has no import counted is
 * freed only if no reference to its dma-buf remains outside the module;
 * otherwise, if the pool ever handed out an fd of it, it stays: held, still
 * charged to the pool's limit, its user and the global limit, shown in
 * held_bytes, and freed once the last outside reference is gone.
 *
 * The file's reference count is all the kernel can see: an importer's fd
 * and the exporter's are the same file, so a held entry may be kept by the
 * exporter's own fd or mapping too (libkfdpool unpins a chunk, then unmaps
 * and closes it: its chunks are held for that moment only).  Entries the
 * pool never handed out are freed at once as before: whoever holds them
 * got them from the pinner, not from the pool.  ALLOC's entries were
 * handed out from the start (ALLOC returns an fd).  A CPU mapping of
 * ALLOC's memory holds its shmem file, not the dma-buf: it is not seen
 * here, and keeps the pages uncharged once the entry is gone.
 *
 * Nothing tells a module that a file reference was dropped, so held
 * entries are checked: when the pool's figures are read (STATS, fdinfo),
 * when a PIN would fail a limit, on QUERY, and by a delayed work that runs
 * while any entry is held, every 100 ms, backing off to 5 s while nothing
 * is freed.  The check reads the file's count and the module's own
 * references under the charge lock (kfdpool_charge_outside_refs()): once
 * they match, nobody else can reach the file, so freeing is never early.
 *
 * A pool whose files are all closed while it holds entries stays, as a
 * zombie, on the pool list (debugfs shows it) but not in the id table, until
 * the reaper frees its last held entry.  Unloading the module drops what
 * zombies hold: the memory stays with its holders, uncharged.
 */
#include <linux/dma-buf.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "kfdpool.h"

#define KFDPOOL_REAP_MIN	(HZ / 10)
#define KFDPOOL_REAP_MAX	(5 * HZ)

/* Pools with held entries (pool->held_node). */
static DEFINE_SPINLOCK(kfdpool_held_lock);
static LIST_HEAD(kfdpool_held_pools);
static atomic_t kfdpool_nr_held = ATOMIC_INIT(0);

static void kfdpool_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(kfdpool_reap_work, kfdpool_reap_fn);
static unsigned long kfdpool_reap_delay = KFDPOOL_REAP_MIN;

/* Does anyone but the module reference @entry's dma-buf? */
static bool kfdpool_entry_outside(struct kfdpool_entry *entry)
{
	return kfdpool_charge_outside_refs(entry->dmabuf, entry->dmabuf->file);
}

/*
 * Put @pool on the list of pools to reap, unless it is on it already or on
 * a reaper's list of pools to do.
 */
static void kfdpool_held_enlist(struct kfdpool_pool *pool)
{
	spin_lock(&kfdpool_held_lock);
	if (list_empty(&pool->held_node))
		list_add_tail(&pool->held_node, &kfdpool_held_pools);
	spin_unlock(&kfdpool_held_lock);
}

/* Make @entry held; pool->lock held. */
void kfdpool_held_add(struct kfdpool_pool *pool, struct kfdpool_entry *entry)
{
	lockdep_assert_held(&pool->lock);
	entry->held = true;
	list_add_tail(&entry->held_node, &pool->held);
	pool->held_bytes += entry->size;
	pool->nr_held++;
	kfdpool_held_enlist(pool);

	atomic_inc(&kfdpool_nr_held);
	WRITE_ONCE(kfdpool_reap_delay, KFDPOOL_REAP_MIN);
	mod_delayed_work(system_wq, &kfdpool_reap_work, KFDPOOL_REAP_MIN);
}

/* @entry is held no longer (it is being freed); pool->lock held. */
void kfdpool_held_del(struct kfdpool_pool *pool, struct kfdpool_entry *entry)
{
	lockdep_assert_held(&pool->lock);
	entry->held = false;
	list_del(&entry->held_node);
	pool->held_bytes -= entry->size;
	atomic_dec(&kfdpool_nr_held);
	if (--pool->nr_held)
		return;
	spin_lock(&kfdpool_held_lock);
	list_del_init(&pool->held_node);
	spin_unlock(&kfdpool_held_lock);
}

/**
 * kfdpool_entry_settle() - an unpinned entry with no import counted:
 *	free it, or hold it while fds the pool handed out may be open
 * @pool: its pool
 * @entry: the entry, draining, without holders and not busy
 *
 * pool->lock held.
 *
 * Return: true if the entry is held, false if it was freed.
 */
bool kfdpool_entry_settle(struct kfdpool_pool *pool,
			  struct kfdpool_entry *entry)
{
	lockdep_assert_held(&pool->lock);
	if (entry->held)
		return true;
	if (entry->handed_out && kfdpool_entry_outside(entry)) {
		kfdpool_held_add(pool, entry);
		return true;
	}
	kfdpool_entry_free(pool, entry);
	return false;
}

/**
 * kfdpool_pool_reap_locked() - free @pool's held entries that nobody
 *	outside the module references any more
 * @pool: the pool
 *
 * pool->lock held.  Bounded by the pool's entries (max_entries).
 *
 * Return: how many were freed.
 */
unsigned int kfdpool_pool_reap_locked(struct kfdpool_pool *pool)
{
	struct kfdpool_entry *entry, *tmp;
	unsigned int n = 0;

	lockdep_assert_held(&pool->lock);
	list_for_each_entry_safe(entry, tmp, &pool->held, held_node) {
		if (kfdpool_entry_outside(entry))
			continue;
		kfdpool_entry_free(pool, entry);
		n++;
	}
	return n;
}

/**
 * kfdpool_reap_all() - reap every pool that holds entries; free zombies
 *	that hold none any more
 *
 * Takes kfdpool_pools_lock for one pool at a time: a pool may leave the
 * list (its last held entry freed by its own STATS) and be freed only under
 * that lock, so the pool taken off the list stays valid until we are done.
 *
 * Return: how many entries were freed.
 */
unsigned int kfdpool_reap_all(void)
{
	struct kfdpool_pool *pool;
	unsigned int n = 0;
	LIST_HEAD(todo);
	bool gone;

	if (!atomic_read(&kfdpool_nr_held))
		return 0;
	spin_lock(&kfdpool_held_lock);
	list_splice_init(&kfdpool_held_pools, &todo);
	spin_unlock(&kfdpool_held_lock);

	for (;;) {
		mutex_lock(&kfdpool_pools_lock);
		spin_lock(&kfdpool_held_lock);
		pool = list_first_entry_or_null(&todo, struct kfdpool_pool,
						held_node);
		if (pool)
			list_del_init(&pool->held_node);
		spin_unlock(&kfdpool_held_lock);
		if (!pool) {
			mutex_unlock(&kfdpool_pools_lock);
			break;
		}

		mutex_lock(&pool->lock);
		n += kfdpool_pool_reap_locked(pool);
		/* Its own ops may have put it back on the list meanwhile. */
		if (pool->nr_held)
			kfdpool_held_enlist(pool);
		gone = pool->zombie && !pool->nr_held;
		mutex_unlock(&pool->lock);
		if (gone)
			kfdpool_pool_unlist(pool);
		mutex_unlock(&kfdpool_pools_lock);
		if (gone)
			kfdpool_pool_destroy(pool);
		cond_resched();
	}
	return n;
}

static void kfdpool_reap_fn(struct work_struct *work)
{
	unsigned long delay = READ_ONCE(kfdpool_reap_delay);

	if (!kfdpool_reap_all())
		delay = min(delay * 2, (unsigned long)KFDPOOL_REAP_MAX);
	else
		delay = KFDPOOL_REAP_MIN;
	WRITE_ONCE(kfdpool_reap_delay, delay);
	if (atomic_read(&kfdpool_nr_held))
		queue_delayed_work(system_wq, &kfdpool_reap_work, delay);
}

/*
 * Module exit: no pool file is open (each holds a module reference), so
 * only zombies are left.  Free them with what they hold.
 */
void kfdpool_held_exit(void)
{
	struct kfdpool_pool *pool, *tmp;
	struct kfdpool_entry *entry, *etmp;

	cancel_delayed_work_sync(&kfdpool_reap_work);
	mutex_lock(&kfdpool_pools_lock);
	list_for_each_entry_safe(pool, tmp, &kfdpool_pools, node) {
		if (WARN_ON(!pool->zombie))
			continue;
		mutex_lock(&pool->lock);
		list_for_each_entry_safe(entry, etmp, &pool->held, held_node)
			kfdpool_entry_free(pool, entry);
		mutex_unlock(&pool->lock);
		kfdpool_pool_unlist(pool);
		kfdpool_pool_destroy(pool);
	}
	mutex_unlock(&kfdpool_pools_lock);
}
